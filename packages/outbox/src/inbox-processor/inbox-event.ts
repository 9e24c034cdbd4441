import type { ReceivedEvent } from '../receive/received-event.ts';
import type { InboxRow } from './claim-inbox-rows.ts';

/** An inbox row as an inbox handler sees it. */
export interface InboxEvent extends ReceivedEvent {
  readonly receivedAt: Date;
  /** Failed attempts before this one. */
  readonly attempts: number;
}

/** The event a handler sees for a claimed row: the claim counted this attempt already. */
export function inboxEventOf(row: InboxRow): InboxEvent {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    partitionKey: row.partition_key,
    payload: row.payload,
    occurredAt: row.occurred_at,
    topic: row.topic,
    partition: row.kafka_partition,
    offset: row.kafka_offset,
    headers: row.headers,
    receivedAt: row.received_at,
    attempts: row.attempts - 1,
  };
}
