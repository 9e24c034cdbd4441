import type { Message, Producer, RecordMetadata } from 'kafkajs';
import { OutboxError } from '../errors.ts';
import { invalidTopicReason, recordBytes } from '../outbox/kafka-limits.ts';
import type { ClaimedEvent } from './claim-batch.ts';
import { toKafkaMessage } from './kafka-message.ts';
import { classifySendError, type SendErrorKind } from './send-error.ts';
import { startEventSpan, tracingAvailable, type EventSpan } from '../trace/spans.ts';

/** A row Kafka (or the relay's pre-send check) refused. */
export interface Refusal {
  readonly event: ClaimedEvent;
  readonly reason: string;
  /** Cannot pass on a retry: set aside at once. */
  readonly final: boolean;
}

export interface SendOutcome {
  /** Rows Kafka acknowledged. */
  readonly acked: readonly ClaimedEvent[];
  readonly refused: readonly Refusal[];
  /**
   * Kafka or the network failed while refused rows were being pinned down; rows neither acked
   * nor refused were not sent (or not for sure) and stay unpublished. Undefined when none.
   */
  readonly interruption: unknown;
}

export interface SendOptions {
  readonly maxEventBytes: number;
  readonly sendTimeoutMs: number;
  /** Called before the resends that pin refused rows down (keeps the batch's session busy). */
  readonly keepAlive: () => Promise<unknown>;
}

interface Outgoing {
  readonly event: ClaimedEvent;
  readonly message: Message;
}

/**
 * Sends a claimed batch (in id order) and tells which rows Kafka acknowledged and which it
 * refused, without sending any row twice because another one was refused.
 *
 * Rows that Kafka would refuse for their size or topic name are refused before anything is
 * sent. The rest go out in one `sendBatch`. If Kafka refuses part of it, what kafkajs 2.2.4
 * does decides the next steps:
 * - A produce request carries every partition that one broker leads. The broker appends each
 *   partition's record batch on its own, but kafkajs's produce response parser throws the
 *   first partition error it finds, so the send fails as a whole while other partitions of
 *   the same request were appended.
 * - On that failure kafkajs (sendMessages.js) rolls back the producer's sequence numbers of
 *   every partition in the request. Sending the same messages again with the SAME producer
 *   repeats each partition's base sequence and count; the broker recognises a batch it
 *   already appended (same producer id, epoch and sequence range) and acknowledges it with
 *   its original offsets without appending it again. A new producer (new producer id) would
 *   get a second copy appended: that is why the relay keeps its producer after a refusal.
 * - A partition's record batch is appended or refused whole, so a refused partition's
 *   records were not appended and can be sent again one at a time to find the refused ones.
 *
 * So: each partition's messages are sent again, exactly as before (the partitioner pinned
 * each message's partition); a partition still refused is sent one record at a time, in
 * order; a refused record holds back the later rows of its key in this batch. When the topic
 * itself was refused (no metadata: kafkajs fails before sending anything), its rows are
 * refused and the rows of their keys in other topics wait.
 *
 * Limit: with several brokers, kafkajs sends one request per broker and only the failed
 * broker's partitions are rolled back; a resend of partitions another broker had already
 * appended is appended again (once, not in a loop). With one broker there is one request.
 */
export async function sendEvents(
  producer: Producer,
  events: readonly ClaimedEvent[],
  options: SendOptions,
): Promise<SendOutcome> {
  if (!tracingAvailable()) return sendClaimed(producer, events, options);
  const spans = new Map(events.map((event) => [event.id, publishSpan(event)]));
  try {
    const outcome = await sendClaimed(producer, events, options);
    for (const event of outcome.acked) spans.get(event.id)?.end();
    for (const { event, reason } of outcome.refused) spans.get(event.id)?.end(reason);
    const settled = new Set([...outcome.acked, ...outcome.refused.map(({ event }) => event)]);
    for (const event of events) {
      if (!settled.has(event)) spans.get(event.id)?.end('not sent: Kafka failed before it was');
    }
    return outcome;
  } catch (error) {
    for (const span of spans.values()) span.end(error);
    throw error;
  }
}

/**
 * One span per event, a child of the enqueue span its row names. Not one span for the batch
 * with a link to each event: the publish would then sit in a trace of its own, apart from the
 * order it belongs to. The message keeps the enqueue span as its `traceparent` (the creation
 * context of the messaging conventions), so a consumer continues the event, whichever publish
 * (a retry, a replay) delivered it.
 */
function publishSpan(event: ClaimedEvent): EventSpan {
  return startEventSpan({
    operation: 'publish',
    topic: event.topic,
    eventId: event.event_id,
    eventType: event.event_type,
    partitionKey: event.partition_key,
    headers: event.headers,
  });
}

async function sendClaimed(
  producer: Producer,
  events: readonly ClaimedEvent[],
  options: SendOptions,
): Promise<SendOutcome> {
  const outcome = new Outcome();
  const outgoing = precheck(events, options.maxEventBytes, outcome);
  if (outgoing.length === 0) return outcome.result();
  let acknowledged: RecordMetadata[] | undefined;
  try {
    acknowledged = await withTimeout(
      producer.sendBatch({
        topicMessages: groupByTopic(outgoing),
        acks: -1,
        timeout: options.sendTimeoutMs,
      }),
      options.sendTimeoutMs,
    );
  } catch (error) {
    if (classifySendError(error).kind === 'outage') throw error;
  }
  if (acknowledged !== undefined) {
    assertEveryPartitionAcknowledged(outgoing, acknowledged);
    outcome.ack(outgoing);
    return outcome.result();
  }
  await options.keepAlive();
  const resend = new Resend(producer, outcome, performance.now() + options.sendTimeoutMs);
  const groups = byPartition(outgoing);
  const groupOf = new Map(groups.flatMap((group) => group.map((one) => [one, group] as const)));
  for (const group of groups) {
    if (outcome.interrupted) break;
    // A placed group may have been appended: only the same messages again are recognised as
    // duplicates. An unplaced one was never sent, so a row can wait for its key's earlier rows
    // in other topics (a refusal there must hold it back).
    const placed = group[0]?.message.partition !== undefined;
    const sendable = placed
      ? group
      : group.filter((one) =>
          outgoing.every(
            (other) =>
              other.event.partition_key !== one.event.partition_key ||
              BigInt(other.event.id) >= BigInt(one.event.id) ||
              groupOf.get(other) === group ||
              outcome.acked(other.event),
          ),
        );
    if (sendable.length > 0) await resend.group(sendable);
  }
  return outcome.result();
}

/**
 * Every partition the batch went to must be in Kafka's answer. kafkajs 2.2.4 retries a failed
 * send only to the brokers that had not answered an earlier attempt (producer/sendMessages.js):
 * when a partition's leader moved to a broker that had already answered, that partition's
 * messages are never sent, yet the send resolves. The batch is then sent again as a whole.
 */
function assertEveryPartitionAcknowledged(
  outgoing: readonly Outgoing[],
  acknowledged: readonly RecordMetadata[],
): void {
  const answered = new Set(acknowledged.map((one) => `${one.topicName}\u0000${one.partition}`));
  const missing = outgoing.filter(
    ({ event, message }) => !answered.has(`${event.topic}\u0000${message.partition ?? ''}`),
  );
  if (missing.length > 0) {
    throw new OutboxError(
      'SEND_INCOMPLETE',
      `Kafka's answer lacks ${missing.length} of ${outgoing.length} event(s) (a partition whose leader moved was not sent)`,
    );
  }
}

/** Refuses rows Kafka would refuse (topic name, size); the rest become Kafka messages. */
function precheck(
  events: readonly ClaimedEvent[],
  maxEventBytes: number,
  outcome: Outcome,
): Outgoing[] {
  const outgoing: Outgoing[] = [];
  for (const event of events) {
    if (outcome.blocks(event)) continue;
    const badTopic = invalidTopicReason(event.topic);
    if (badTopic !== undefined) {
      outcome.refuse(event, `INVALID_TOPIC: ${badTopic}`, true);
      continue;
    }
    const message = toKafkaMessage(event);
    const bytes = recordBytes(message);
    if (bytes > maxEventBytes) {
      outcome.refuse(
        event,
        `EVENT_TOO_LARGE: ${bytes} bytes as a Kafka record, above maxEventBytes ${maxEventBytes}`,
        true,
      );
      continue;
    }
    outgoing.push({ event, message });
  }
  return outgoing;
}

/** Acked and refused rows of one batch, and the keys a refusal holds back. */
class Outcome {
  readonly #acked: ClaimedEvent[] = [];
  readonly #ackedIds = new Set<string>();
  readonly #refused: Refusal[] = [];
  readonly #blockedKeys = new Set<string>();
  #interruption: unknown;
  #interrupted = false;

  get interrupted(): boolean {
    return this.#interrupted;
  }

  acked(event: ClaimedEvent): boolean {
    return this.#ackedIds.has(event.id);
  }

  blocks(event: ClaimedEvent): boolean {
    return this.#blockedKeys.has(event.partition_key);
  }

  ack(outgoing: readonly Outgoing[]): void {
    for (const { event } of outgoing) {
      this.#acked.push(event);
      this.#ackedIds.add(event.id);
    }
  }

  refuse(event: ClaimedEvent, reason: string, final: boolean): void {
    this.#refused.push({ event, reason, final });
    this.#blockedKeys.add(event.partition_key);
  }

  interrupt(error: unknown): void {
    this.#interrupted = true;
    this.#interruption = error;
  }

  result(): SendOutcome {
    return { acked: this.#acked, refused: this.#refused, interruption: this.#interruption };
  }
}

/** The resends that pin refused rows down, all before one deadline. */
class Resend {
  readonly #producer: Producer;
  readonly #outcome: Outcome;
  readonly #deadline: number;

  constructor(producer: Producer, outcome: Outcome, deadline: number) {
    this.#producer = producer;
    this.#outcome = outcome;
    this.#deadline = deadline;
  }

  /** Sends messages of one topic again, exactly as grouped before; narrows down on refusal. */
  async group(group: readonly Outgoing[]): Promise<void> {
    const kind = await this.#send(group);
    if (kind === undefined) return;
    const first = group[0];
    if (first === undefined) return;
    if (group.length === 1) return this.#refuse(first, kind);
    const parts = byPartition(group);
    if (parts.length > 1) {
      // kafkajs placed them now, in several partitions: each partition's share again, as is.
      for (const part of parts) {
        if (this.#outcome.interrupted) return;
        await this.group(part);
      }
      return;
    }
    if (first.message.partition === undefined) {
      // Never placed in a partition: the topic itself was refused (no metadata), nothing sent.
      for (const one of group) if (!this.#outcome.blocks(one.event)) this.#refuse(one, kind);
      return;
    }
    // One partition, refused whole, so nothing of it was appended: one record at a time.
    for (const one of group) {
      if (this.#outcome.interrupted) return;
      if (this.#outcome.blocks(one.event)) continue;
      const single = await this.#send([one]);
      if (single !== undefined) this.#refuse(one, single);
    }
  }

  /** Undefined when acked (or on an outage, which interrupts); else why it was refused. */
  async #send(
    group: readonly Outgoing[],
  ): Promise<Extract<SendErrorKind, { kind: 'refused' }> | undefined> {
    const first = group[0];
    if (first === undefined) return undefined;
    const remaining = Math.floor(this.#deadline - performance.now());
    try {
      if (remaining <= 0) {
        throw new OutboxError('SEND_TIMEOUT', 'no time left to pin down refused rows');
      }
      await withTimeout(
        this.#producer.send({
          topic: first.event.topic,
          messages: group.map((one) => one.message),
          acks: -1,
          timeout: remaining,
        }),
        remaining,
      );
      this.#outcome.ack(group);
      return undefined;
    } catch (error) {
      const kind = classifySendError(error);
      if (kind.kind === 'refused') return kind;
      this.#outcome.interrupt(error);
      return undefined;
    }
  }

  #refuse(one: Outgoing, kind: Extract<SendErrorKind, { kind: 'refused' }>): void {
    this.#outcome.refuse(one.event, kind.reason, kind.final);
  }
}

/** Groups by topic and pinned partition (unplaced messages: one group per topic), in order. */
function byPartition(outgoing: readonly Outgoing[]): Outgoing[][] {
  const groups = new Map<string, Outgoing[]>();
  for (const one of outgoing) {
    const key = `${one.event.topic}\u0000${one.message.partition ?? ''}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(one);
  }
  return [...groups.values()];
}

/** Kafka messages, grouped by topic, each topic's messages in batch (id) order. */
function groupByTopic(outgoing: readonly Outgoing[]): { topic: string; messages: Message[] }[] {
  const byTopic = new Map<string, Message[]>();
  for (const { event, message } of outgoing) {
    let messages = byTopic.get(event.topic);
    if (messages === undefined) byTopic.set(event.topic, (messages = []));
    messages.push(message);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/** Rejects after `ms`; the row locks are released by the rollback that follows. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutboxError('SEND_TIMEOUT', `Kafka did not acknowledge within ${ms} ms`)),
      ms,
    );
  });
  // The abandoned send may still fail later; that outcome no longer matters.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
