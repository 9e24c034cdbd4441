import type { OutgoingRecord } from './kafka-client.ts';

/** Header names every published event carries (besides the event's own extra headers). */
export const EVENT_HEADERS = Object.freeze({
  eventId: 'event_id',
  eventType: 'event_type',
  aggregateType: 'aggregate_type',
  aggregateId: 'aggregate_id',
  occurredAt: 'occurred_at',
});

/** The columns of an outbox row that make up its Kafka record. */
export interface EventMessageFields {
  readonly topic: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly partition_key: string;
  /** The payload as JSON text. */
  readonly payload: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly created_at: Date;
}

/** An event's Kafka record: string key and value, one value per header. */
export interface EventRecord extends OutgoingRecord {
  readonly key: string;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The Kafka record of an event: key = partition key, value = JSON payload, the event's own
 * headers plus the standard ones. enqueue builds it too, to measure the event as the relay
 * will send it.
 */
export function toEventRecord(event: EventMessageFields): EventRecord {
  return {
    topic: event.topic,
    key: event.partition_key,
    value: event.payload,
    headers: {
      ...event.headers,
      [EVENT_HEADERS.eventId]: event.event_id,
      [EVENT_HEADERS.eventType]: event.event_type,
      [EVENT_HEADERS.aggregateType]: event.aggregate_type,
      [EVENT_HEADERS.aggregateId]: event.aggregate_id,
      [EVENT_HEADERS.occurredAt]: event.created_at.toISOString(),
    },
  };
}
