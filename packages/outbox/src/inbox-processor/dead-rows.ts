import { sql, type Kysely, type UpdateObject } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { SetAsideEvent } from '../ops/set-aside-event.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * Operator path for dead inbox rows (which hold back later events of their key).
 * Requeue: the processor tries them again (attempts reset; last_error kept for the record).
 */
export async function requeueDeadInboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  return changeDeadRows(dbIn, eventIds, {
    dead_at: null,
    attempts: 0,
    next_attempt_at: sql<Date>`now()`,
  });
}

/**
 * Discard: marks dead rows processed without running a handler, releasing their key.
 * `dead_at` and `last_error` stay, so the row still shows it was skipped.
 */
export async function discardDeadInboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
): Promise<number> {
  return changeDeadRows(dbIn, eventIds, {
    processed: true,
    processed_at: sql<Date>`now()`,
    last_error: sql<string>`'discarded by operator; ' || coalesce(last_error, '')`,
  });
}

/**
 * Applies `changes` to the rows of these events that are dead and still unprocessed (a row
 * another operator already requeued or discarded is left alone). Returns how many changed.
 */
async function changeDeadRows<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  eventIds: readonly string[],
  changes: UpdateObject<OutboxTables, 'inbox_event'>,
): Promise<number> {
  if (eventIds.length === 0) return 0;
  const result = await outboxDb(dbIn)
    .updateTable('inbox_event')
    .set(changes)
    .where('event_id', 'in', eventIds)
    .where('dead_at', 'is not', null)
    .where('processed', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A dead inbox row: it exhausted its attempts and holds back the later rows of its key. */
export interface DeadInboxEvent extends SetAsideEvent {
  readonly consumerGroup: string;
  readonly deadAt: Date;
  readonly receivedAt: Date;
}

/** Dead rows, oldest first (optionally of one consumer group), at most `limit` (default 100). */
export async function listDeadInboxEvents<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: { readonly consumerGroup?: string; readonly limit?: number } = {},
): Promise<DeadInboxEvent[]> {
  let query = outboxDb(dbIn)
    .selectFrom('inbox_event')
    .select([
      'event_id',
      'consumer_group',
      'event_type',
      'topic',
      'partition_key',
      'attempts',
      'last_error',
      'dead_at',
      'received_at',
    ])
    .where('dead_at', 'is not', null)
    .where('processed', '=', false)
    .$narrowType<{ dead_at: Date }>()
    .orderBy('seq')
    .limit(options.limit ?? 100);
  if (options.consumerGroup !== undefined) {
    query = query.where('consumer_group', '=', options.consumerGroup);
  }
  const rows = await query.execute();
  return rows.map((row) => ({
    eventId: row.event_id,
    consumerGroup: row.consumer_group,
    eventType: row.event_type,
    topic: row.topic,
    partitionKey: row.partition_key,
    attempts: row.attempts,
    lastError: row.last_error,
    deadAt: row.dead_at,
    receivedAt: row.received_at,
  }));
}
