import { sql, type Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/** One table's state, as an operator reads it before acting. */
export interface TableStatus {
  readonly table: string;
  /** Rows waiting for a worker: unpublished outbox rows, unprocessed inbox rows. */
  readonly backlog: number;
  /** Age in seconds of the oldest row waiting (of the oldest row, for the other tables). */
  readonly oldestAgeSeconds: number | null;
  /** Rows waiting for an operator: FAILED outbox rows, dead inbox rows, parked messages. */
  readonly stuck: number;
  /** Rows done and kept until retention deletes them. */
  readonly retained: number;
}

/**
 * Backlog, oldest age, stuck and retained rows of each library table. It counts every row, so
 * it is for an operator's one look, not for a scrape (the metrics read indexed subsets only).
 */
export async function readOutboxStatus<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
): Promise<TableStatus[]> {
  const result = await sql<{
    table: string;
    backlog: string;
    oldest_age: number | null;
    stuck: string;
    retained: string;
  }>`
    SELECT 'outbox_event' AS table,
      count(*) FILTER (WHERE published_at IS NULL) AS backlog,
      extract(epoch FROM now() - min(created_at) FILTER (WHERE published_at IS NULL))::float8
        AS oldest_age,
      count(*) FILTER (WHERE failed_at IS NOT NULL AND published_at IS NULL) AS stuck,
      count(*) FILTER (WHERE published_at IS NOT NULL) AS retained
    FROM outbox_event
    UNION ALL
    SELECT 'inbox_event',
      count(*) FILTER (WHERE NOT processed AND dead_at IS NULL),
      extract(epoch FROM now() - min(received_at) FILTER (WHERE NOT processed AND dead_at IS NULL))::float8,
      count(*) FILTER (WHERE NOT processed AND dead_at IS NOT NULL),
      count(*) FILTER (WHERE processed)
    FROM inbox_event
    UNION ALL
    SELECT 'processed_event', 0, extract(epoch FROM now() - min(processed_at))::float8, 0, count(*)
    FROM processed_event
    UNION ALL
    SELECT 'parked_message', 0, extract(epoch FROM now() - min(parked_at))::float8, count(*), 0
    FROM parked_message
  `.execute(outboxDb(dbIn));
  return result.rows.map((row) => ({
    table: row.table,
    backlog: Number(row.backlog),
    oldestAgeSeconds: row.oldest_age,
    stuck: Number(row.stuck),
    retained: Number(row.retained),
  }));
}
