import { sql, type Kysely, type UpdateObject } from 'kysely';
import { eventSummaryOf } from '../internal/event-summary.ts';
import { outboxDb } from '../internal/views.ts';
import { OUTBOX_CHANNEL } from '../enqueue/channels.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { SetAsideEvent } from './set-aside-event.ts';

/**
 * An outbox row the relay set aside (FAILED): Kafka refused it, and its key waits behind it.
 * `attempts` counts the times Kafka (or the relay's pre-send check) refused it.
 */
export interface FailedOutboxEvent extends SetAsideEvent {
  readonly id: string;
  readonly failedAt: Date;
  readonly createdAt: Date;
  /** Later unpublished rows of its key, held back by it. */
  readonly waitingBehind: number;
}

/** Failed rows, oldest first (optionally of one topic), at most `limit` (default 100). */
export async function listFailedOutboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: { readonly topic?: string; readonly limit?: number } = {},
): Promise<FailedOutboxEvent[]> {
  const result = await sql<{
    id: string;
    event_id: string;
    event_type: string;
    topic: string;
    partition_key: string;
    publish_attempts: number;
    last_error: string | null;
    failed_at: Date;
    created_at: Date;
    waiting_behind: string;
  }>`
    SELECT f.id, f.event_id, f.event_type, f.topic, f.partition_key, f.publish_attempts,
      f.last_error, f.failed_at, f.created_at,
      (SELECT count(*) FROM outbox_event w
        WHERE w.partition_key = f.partition_key AND w.published_at IS NULL AND w.id > f.id
      ) AS waiting_behind
    FROM outbox_event f
    WHERE f.failed_at IS NOT NULL AND f.published_at IS NULL
      ${options.topic === undefined ? sql`` : sql`AND f.topic = ${options.topic}`}
    ORDER BY f.id
    LIMIT ${options.limit ?? 100}
  `.execute(outboxDb(dbIn));
  return result.rows.map((row) => ({
    id: row.id,
    ...eventSummaryOf(row),
    attempts: row.publish_attempts,
    lastError: row.last_error,
    failedAt: row.failed_at,
    createdAt: row.created_at,
    waitingBehind: Number(row.waiting_behind),
  }));
}

/**
 * Retry: the relay tries these failed rows again (attempts reset, `last_error` kept for the
 * record), e.g. after the topic was created or its `max.message.bytes` raised. Returns how
 * many rows were failed and are now queued; wakes the relays.
 */
export async function retryFailedOutboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  return changeFailedRows(dbIn, eventIds, { failed_at: null, publish_attempts: 0 });
}

/**
 * Skip: the key moves on without these failed rows ever being published. They are marked
 * `published_at` (so the relay, the backlog gauges and the index of unpublished rows leave
 * them) and `skipped_at`; `failed_at` and `last_error` stay, so the row still shows it was
 * refused and skipped. Retention deletes them with the published rows. Returns how many rows
 * were failed and are now skipped; wakes the relays.
 */
export async function skipFailedOutboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  return changeFailedRows(dbIn, eventIds, {
    published_at: sql<Date>`now()`,
    skipped_at: sql<Date>`now()`,
  });
}

/**
 * Applies `changes` to the rows of these events that are failed and still unpublished (a row
 * another operator already retried or skipped is left alone), then wakes the relays. Returns
 * how many rows changed.
 */
async function changeFailedRows<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
  changes: UpdateObject<OutboxTables, 'outbox_event'>,
): Promise<number> {
  if (eventIds.length === 0) return 0;
  return outboxDb(dbIn)
    .transaction()
    .execute(async (trx) => {
      const result = await trx
        .updateTable('outbox_event')
        .set(changes)
        .where('event_id', 'in', eventIds)
        .where('failed_at', 'is not', null)
        .where('published_at', 'is', null)
        .executeTakeFirst();
      await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
      return Number(result.numUpdatedRows);
    });
}
