import { sql, type Kysely } from 'kysely';
import type { ReceivedEvent } from '../receive/received-event.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { countInboxRepeats, repeatsOf } from './count-inbox-repeats.ts';

/** One `inbox_event` row as the INSERT binds it: text and numbers, made before any statement. */
export interface InboxRow {
  readonly eventId: string;
  readonly eventType: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly partitionKey: string;
  readonly payloadJson: string;
  readonly headersJson: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly occurredAt: string;
}

/**
 * The row of a received event. The payload goes in as the message's own JSON text: the parsed
 * value is never serialised again, because JSON.stringify overflows the stack on a value nested
 * a few thousand levels deep that JSON.parse took. Throws when the event's content cannot make
 * a row; the caller parks that event alone.
 */
export function inboxRowOf(event: ReceivedEvent, payloadJson: string): InboxRow {
  return {
    eventId: event.eventId,
    eventType: event.eventType,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    partitionKey: event.partitionKey,
    payloadJson,
    headersJson: JSON.stringify(event.headers),
    topic: event.topic,
    partition: event.partition,
    offset: event.offset,
    occurredAt: event.occurredAt.toISOString(),
  };
}

/**
 * Stores received events with ONE statement of eleven array parameters, whatever the batch
 * size: a multi-row VALUES list would bind twelve parameters per row (and hit PostgreSQL's
 * 65,535 limit), which costs more to build in Node and to parse and plan in PostgreSQL.
 * `unnest` yields the rows in array order, so `seq` follows the Kafka offsets of the batch.
 * Repeats (already stored, or twice in this batch) are dropped by the conflict clause and
 * counted in their stored row's `redeliveries` (a second statement, only when there are some).
 * `trx` is the batch's transaction, or the database itself when the INSERT is all there is to
 * store (autocommit).
 * Returns the ids of the rows that were new (as PostgreSQL writes a uuid: lower case).
 */
export async function insertInboxEvents(
  trx: Kysely<OutboxTables>,
  consumerGroup: string,
  rows: readonly InboxRow[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const column = <T>(pick: (row: InboxRow) => T): T[] => rows.map(pick);
  const result = await sql<{ event_id: string }>`
    WITH inserted AS (
      INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type,
        aggregate_id, partition_key, payload, headers, topic, kafka_partition, kafka_offset,
        occurred_at)
      SELECT e.event_id, ${consumerGroup}, e.event_type, e.aggregate_type, e.aggregate_id,
        e.partition_key, e.payload, e.headers, e.topic, e.kafka_partition, e.kafka_offset,
        e.occurred_at
      FROM unnest(
        ${column((e) => e.eventId)}::uuid[],
        ${column((e) => e.eventType)}::text[],
        ${column((e) => e.aggregateType)}::text[],
        ${column((e) => e.aggregateId)}::text[],
        ${column((e) => e.partitionKey)}::text[],
        ${column((e) => e.payloadJson)}::jsonb[],
        ${column((e) => e.headersJson)}::jsonb[],
        ${column((e) => e.topic)}::text[],
        ${column((e) => e.partition)}::integer[],
        ${column((e) => e.offset)}::bigint[],
        ${column((e) => e.occurredAt)}::timestamptz[]
      ) AS e(event_id, event_type, aggregate_type, aggregate_id, partition_key, payload,
        headers, topic, kafka_partition, kafka_offset, occurred_at)
      ON CONFLICT (event_id) DO NOTHING
      RETURNING event_id
    )
    SELECT event_id::text AS event_id FROM inserted
  `.execute(trx);
  const insertedIds = result.rows.map((row) => row.event_id);
  await countInboxRepeats(
    trx,
    repeatsOf(
      rows.map((row) => row.eventId),
      insertedIds,
    ),
  );
  return insertedIds;
}
