import { sql, type Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * Operator path for dead inbox rows (which hold back later events of their key).
 * Requeue: the processor tries them again (attempts reset; last_error kept for the record).
 */
export async function requeueDeadInboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await outboxDb(dbIn)
    .updateTable('inbox_event')
    .set({ dead_at: null, attempts: 0, next_attempt_at: sql<Date>`now()` })
    .where('event_id', 'in', eventIds)
    .where('dead_at', 'is not', null)
    .where('processed', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Discard: marks dead rows processed without running a handler, releasing their key.
 * `dead_at` and `last_error` stay, so the row still shows it was skipped.
 */
export async function discardDeadInboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await outboxDb(dbIn)
    .updateTable('inbox_event')
    .set({
      processed: true,
      processed_at: sql<Date>`now()`,
      last_error: sql<string>`'discarded by operator; ' || coalesce(last_error, '')`,
    })
    .where('event_id', 'in', eventIds)
    .where('dead_at', 'is not', null)
    .where('processed', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
