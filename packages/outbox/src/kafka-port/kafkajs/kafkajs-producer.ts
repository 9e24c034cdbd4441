import {
  Partitioners,
  type ICustomPartitioner,
  type Kafka,
  type Message,
  type Producer,
  type RecordMetadata,
} from 'kafkajs';
import { OutboxError } from '../../errors.ts';
import type {
  EventProducer,
  OutgoingRecord,
  ProducerOptions,
  SendOptions,
  SendReport,
} from '../kafka-client.ts';
import type { CountRequests } from './request-counting.ts';
import { SendOutcomes } from '../shared/send-outcomes.ts';
import { withSendTimeout } from '../shared/send-timeout.ts';
import { classifySendError, type SendErrorKind } from './send-error.ts';

/**
 * The relay's producer on kafkajs: idempotent, acks -1, one request in flight (per-partition
 * order). It is kept after Kafka refused some records: its sequence numbers are what lets a
 * resend of the records Kafka did append be recognised as a duplicate (see `send` below). A
 * new producer starts new sequences, and the broker takes the same records again.
 */
export function createKafkajsProducer(
  kafka: Kafka,
  options: ProducerOptions,
  countRequests: CountRequests = () => undefined,
): EventProducer {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: pinningPartitioner,
    allowAutoTopicCreation: options.allowAutoTopicCreation,
    // kafkajs keeps 5 retries with long waits by default; the relay retries in its own loop.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  countRequests(producer);
  return {
    connect: () => producer.connect(),
    disconnect: () => producer.disconnect(),
    send: (records, sendOptions) => sendRecords(producer, records, sendOptions),
  };
}

/**
 * Kafka's default (murmur2) partitioner that also writes the partition it chose into the
 * message. A resend of the same message objects then goes to the same partitions in the same
 * groups, and the producer can tell which partition each refused message was in.
 */
const pinningPartitioner: ICustomPartitioner = () => {
  const place = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = place(args);
    args.message.partition = partition;
    return partition;
  };
};

interface Outgoing {
  /** The record's place in the send: records of one key are in this order. */
  readonly index: number;
  readonly topic: string;
  /** Records of one key share it; a record without a key has none to hold back. */
  readonly key: string | undefined;
  /** kafkajs writes the chosen partition into it (pinningPartitioner). */
  readonly message: Message;
}

/**
 * Sends records in one `sendBatch` and, when Kafka refuses part of it, tells which it
 * acknowledged and which it refused, without sending any record twice because another one was
 * refused. What kafkajs 2.2.4 does decides the steps:
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
 * order; a refused record holds back the later records of its key in this send. When the
 * topic itself was refused (no metadata: kafkajs fails before sending anything), its records
 * are refused and the records of their keys in other topics wait.
 *
 * Limit: with several brokers, kafkajs sends one request per broker and only the failed
 * broker's partitions are rolled back; a resend of partitions another broker had already
 * appended is appended again (once, not in a loop). With one broker there is one request.
 */
async function sendRecords(
  producer: Producer,
  records: readonly OutgoingRecord[],
  options: SendOptions,
): Promise<SendReport> {
  const outgoing = records.map(toOutgoing);
  const outcome = new SendOutcomes<Outgoing>(records.length, (one) => one.message.partition ?? -1);
  if (outgoing.length === 0) return outcome.report();
  let acknowledged: RecordMetadata[] | undefined;
  try {
    acknowledged = await withSendTimeout(
      producer.sendBatch({
        topicMessages: groupByTopic(outgoing),
        acks: -1,
        timeout: options.timeoutMs,
      }),
      options.timeoutMs,
    );
  } catch (error) {
    if (classifySendError(error).kind === 'outage') throw error;
  }
  if (acknowledged !== undefined) {
    assertEveryPartitionAcknowledged(outgoing, acknowledged);
    outcome.ack(outgoing);
    return outcome.report();
  }
  await options.keepAlive();
  const resend = new Resend(producer, outcome, performance.now() + options.timeoutMs);
  const groups = byPartition(outgoing);
  const groupOf = new Map(groups.flatMap((group) => group.map((one) => [one, group] as const)));
  for (const group of groups) {
    if (outcome.interrupted) break;
    // A placed group may have been appended: only the same messages again are recognised as
    // duplicates. An unplaced one was never sent, so a record can wait for its key's earlier
    // records in other topics (a refusal there must hold it back).
    const placed = group[0]?.message.partition !== undefined;
    const sendable = placed
      ? group
      : group.filter((one) =>
          outgoing.every(
            (other) =>
              other.key === undefined ||
              other.key !== one.key ||
              other.index >= one.index ||
              groupOf.get(other) === group ||
              outcome.acked(other),
          ),
        );
    if (sendable.length > 0) await resend.group(sendable);
  }
  return outcome.report();
}

function toOutgoing(record: OutgoingRecord, index: number): Outgoing {
  const key =
    record.key === null
      ? undefined
      : typeof record.key === 'string'
        ? `s${record.key}`
        : `b${record.key.toString('hex')}`;
  return {
    index,
    topic: record.topic,
    key,
    message: {
      key: record.key,
      value: record.value,
      // kafkajs takes mutable arrays; it does not change them.
      headers: record.headers as Message['headers'],
    },
  };
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
    ({ topic, message }) => !answered.has(`${topic}\u0000${message.partition ?? ''}`),
  );
  if (missing.length > 0) {
    throw new OutboxError(
      'SEND_INCOMPLETE',
      `Kafka's answer lacks ${missing.length} of ${outgoing.length} record(s) (a partition whose leader moved was not sent)`,
    );
  }
}

/** The resends that pin refused records down, all before one deadline. */
class Resend {
  readonly #producer: Producer;
  readonly #outcome: SendOutcomes<Outgoing>;
  readonly #deadline: number;

  constructor(producer: Producer, outcome: SendOutcomes<Outgoing>, deadline: number) {
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
    if (group.length === 1) return this.#outcome.refuse(first, kind);
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
      for (const one of group) if (!this.#outcome.blocks(one)) this.#outcome.refuse(one, kind);
      return;
    }
    // One partition, refused whole, so nothing of it was appended: one record at a time.
    for (const one of group) {
      if (this.#outcome.interrupted) return;
      if (this.#outcome.blocks(one)) continue;
      const single = await this.#send([one]);
      if (single !== undefined) this.#outcome.refuse(one, single);
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
        throw new OutboxError('SEND_TIMEOUT', 'no time left to pin down refused records');
      }
      await withSendTimeout(
        this.#producer.send({
          topic: first.topic,
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
}

/** Groups by topic and pinned partition (unplaced messages: one group per topic), in order. */
function byPartition(outgoing: readonly Outgoing[]): Outgoing[][] {
  const groups = new Map<string, Outgoing[]>();
  for (const one of outgoing) {
    const key = `${one.topic}\u0000${one.message.partition ?? ''}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(one);
  }
  return [...groups.values()];
}

/** Kafka messages, grouped by topic, each topic's messages in send order. */
function groupByTopic(outgoing: readonly Outgoing[]): { topic: string; messages: Message[] }[] {
  const byTopic = new Map<string, Message[]>();
  for (const { topic, message } of outgoing) {
    let messages = byTopic.get(topic);
    if (messages === undefined) byTopic.set(topic, (messages = []));
    messages.push(message);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
