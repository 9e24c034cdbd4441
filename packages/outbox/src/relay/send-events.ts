import type { EventProducer } from '../kafka-port/kafka-client.ts';
import { invalidTopicReason, recordBytes } from '../enqueue/kafka-limits.ts';
import type { ClaimedEvent } from './claim-batch.ts';
import { toEventRecord, type EventRecord } from '../kafka-port/event-record.ts';
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
  readonly record: EventRecord;
}

/**
 * Sends a claimed batch (in id order) and tells which rows Kafka acknowledged and which it
 * refused, without sending any row twice because another one was refused (the producer's
 * promise, see EventProducer.send).
 *
 * Rows that Kafka would refuse for their size or topic name are refused before anything is
 * sent; a refused row holds back the later rows of its key in this batch.
 */
export async function sendEvents(
  producer: EventProducer,
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
  producer: EventProducer,
  events: readonly ClaimedEvent[],
  options: SendOptions,
): Promise<SendOutcome> {
  const refused: Refusal[] = [];
  const outgoing = precheck(events, options.maxEventBytes, refused);
  if (outgoing.length === 0) return { acked: [], refused, interruption: undefined };
  const report = await producer.send(
    outgoing.map(({ record }) => record),
    { timeoutMs: options.sendTimeoutMs, keepAlive: options.keepAlive },
  );
  const acked: ClaimedEvent[] = [];
  outgoing.forEach(({ event }, index) => {
    const outcome = report.outcomes[index];
    if (outcome?.kind === 'acked') acked.push(event);
    else if (outcome?.kind === 'refused') {
      refused.push({ event, reason: outcome.reason, final: outcome.final });
    }
  });
  return { acked, refused, interruption: report.interruption };
}

/**
 * Refuses rows Kafka would refuse (topic name, size), and the later rows of their keys; the
 * rest become Kafka records.
 */
function precheck(
  events: readonly ClaimedEvent[],
  maxEventBytes: number,
  refused: Refusal[],
): Outgoing[] {
  const outgoing: Outgoing[] = [];
  const blockedKeys = new Set<string>();
  const refuse = (event: ClaimedEvent, reason: string): void => {
    refused.push({ event, reason, final: true });
    blockedKeys.add(event.partition_key);
  };
  for (const event of events) {
    if (blockedKeys.has(event.partition_key)) continue;
    const badTopic = invalidTopicReason(event.topic);
    if (badTopic !== undefined) {
      refuse(event, `INVALID_TOPIC: ${badTopic}`);
      continue;
    }
    const record = toEventRecord(event);
    const bytes = recordBytes(record);
    if (bytes > maxEventBytes) {
      refuse(
        event,
        `EVENT_TOO_LARGE: ${bytes} bytes as a Kafka record, above maxEventBytes ${maxEventBytes}`,
      );
      continue;
    }
    outgoing.push({ event, record });
  }
  return outgoing;
}
