import { sql, type Transaction } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';

export interface InboxRow {
  readonly event_id: string;
  readonly seq: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly partition_key: string;
  readonly payload: unknown;
  readonly headers: Record<string, string>;
  readonly topic: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
  readonly occurred_at: Date;
  readonly received_at: Date;
  readonly attempts: number;
}

/**
 * Locks the oldest row that is due and is the head of its partition key: no older row of
 * the key is unprocessed, dead ones included (a dead row holds its key back until an operator
 * requeues or discards it). `SKIP LOCKED` plus the head condition keep one row per key in
 * flight across all processors.
 */
export async function claimInboxRow(trx: Transaction<OutboxTables>): Promise<InboxRow | undefined> {
  const result = await sql<InboxRow>`
    SELECT i.event_id, i.seq, i.event_type, i.aggregate_type, i.aggregate_id, i.partition_key,
      i.payload, i.headers, i.topic, i.kafka_partition, i.kafka_offset, i.occurred_at,
      i.received_at, i.attempts
    FROM inbox_event i
    WHERE NOT i.processed
      AND i.dead_at IS NULL
      AND i.next_attempt_at <= now()
      AND NOT EXISTS (
        SELECT 1 FROM inbox_event older
        WHERE older.partition_key = i.partition_key
          AND NOT older.processed
          AND older.seq < i.seq
      )
    ORDER BY i.seq
    LIMIT 1
    FOR UPDATE OF i SKIP LOCKED
  `.execute(trx);
  return result.rows[0];
}
