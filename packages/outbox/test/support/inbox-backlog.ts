import { sql, type Kysely } from 'kysely';
import type { OutboxTables } from '../../src/index.ts';

/**
 * 20,000 processed inbox rows and 1,000 unprocessed ones, two per key over 500 keys: enough
 * that the planner would not rather read the whole table, so a claim's plan shows its indexes.
 */
export async function insertInboxBacklog(db: Kysely<OutboxTables>): Promise<void> {
  await sql`INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type,
      aggregate_id, partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at,
      processed, processed_at)
    SELECT gen_random_uuid(), 'g', 'OrderCreated', 'order', g::text, 'k' || (g % 500), '{}',
      't', 0, g, now(), g <= 20000, CASE WHEN g <= 20000 THEN now() END
    FROM generate_series(1, 21000) g`.execute(db);
}
