import { sql, type Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

export interface RetentionOptions {
  /** Rows published / processed before this moment (Date), or longer ago than this many ms. */
  readonly olderThan: Date | number;
  /** Rows deleted per statement (each its own short transaction). Default 1000. */
  readonly batchSize?: number;
  /** Also delete processed_event dedup rows older than this; kept when absent. Keep them
   * longer than any redelivery can happen (Kafka retention), or repeats will apply again. */
  readonly processedEventsOlderThan?: Date | number;
}

export interface RetentionResult {
  readonly outboxDeleted: number;
  readonly inboxDeleted: number;
  readonly processedEventsDeleted: number;
}

/**
 * Deletes published outbox rows and processed inbox rows older than the retention period,
 * in bounded batches. Unpublished outbox rows and unprocessed (or dead) inbox rows are never
 * touched: the conditions are on `published_at` / `processed`, not on age alone.
 */
export async function runRetention<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: RetentionOptions,
): Promise<RetentionResult> {
  const db = outboxDb(dbIn);
  const batchSize = options.batchSize ?? 1000;
  const cutoff = toCutoff(options.olderThan);
  const drain = async (deleteBatch: () => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch();
      total += deleted;
      if (deleted < batchSize) return total;
    }
  };
  const outboxDeleted = await drain(async () => {
    const result = await sql`
      DELETE FROM outbox_event WHERE id IN (
        SELECT id FROM outbox_event
        WHERE published_at IS NOT NULL AND published_at < ${cutoff}
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED)
    `.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  });
  const inboxDeleted = await drain(async () => {
    const result = await sql`
      DELETE FROM inbox_event WHERE event_id IN (
        SELECT event_id FROM inbox_event
        WHERE processed AND processed_at < ${cutoff}
        LIMIT ${batchSize}
        FOR UPDATE SKIP LOCKED)
    `.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  });
  const processedCutoff =
    options.processedEventsOlderThan === undefined
      ? undefined
      : toCutoff(options.processedEventsOlderThan);
  const processedEventsDeleted =
    processedCutoff === undefined
      ? 0
      : await drain(async () => {
          const result = await sql`
            DELETE FROM processed_event WHERE (consumer, event_id) IN (
              SELECT consumer, event_id FROM processed_event
              WHERE processed_at < ${processedCutoff}
              LIMIT ${batchSize})
          `.execute(db);
          return Number(result.numAffectedRows ?? 0n);
        });
  return { outboxDeleted, inboxDeleted, processedEventsDeleted };
}

function toCutoff(olderThan: Date | number): Date {
  return olderThan instanceof Date ? olderThan : new Date(Date.now() - olderThan);
}
