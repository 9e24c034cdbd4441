import { sql, type Transaction } from 'kysely';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { countInboxRepeats, repeatsOf } from './count-inbox-repeats.ts';

/**
 * Stores received events with ONE statement of eleven array parameters, whatever the batch
 * size: a multi-row VALUES list would bind twelve parameters per row (and hit PostgreSQL's
 * 65,535 limit), which costs more to build in Node and to parse and plan in PostgreSQL.
 * `unnest` yields the rows in array order, so `seq` follows the Kafka offsets of the batch.
 * Repeats (already stored, or twice in this batch) are dropped by the conflict clause and
 * counted in their stored row's `redeliveries` (a second statement, only when there are some).
 * Returns the ids of the rows that were new (as PostgreSQL writes a uuid: lower case).
 */
export async function insertInboxEvents(
  trx: Transaction<OutboxTables>,
  consumerGroup: string,
  events: readonly ReceivedEvent[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const column = <T>(pick: (event: ReceivedEvent) => T): T[] => events.map(pick);
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
        ${column((e) => JSON.stringify(e.payload))}::jsonb[],
        ${column((e) => JSON.stringify(e.headers))}::jsonb[],
        ${column((e) => e.topic)}::text[],
        ${column((e) => e.partition)}::integer[],
        ${column((e) => e.offset)}::bigint[],
        ${column((e) => e.occurredAt.toISOString())}::timestamptz[]
      ) AS e(event_id, event_type, aggregate_type, aggregate_id, partition_key, payload,
        headers, topic, kafka_partition, kafka_offset, occurred_at)
      ON CONFLICT (event_id) DO NOTHING
      RETURNING event_id
    )
    SELECT event_id::text AS event_id FROM inserted
  `.execute(trx);
  const insertedIds = result.rows.map((row) => row.event_id);
  await countInboxRepeats(trx, repeatsOf(events, insertedIds));
  return insertedIds;
}
