import { sql, type Transaction } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxTrx } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { OUTBOX_CHANNEL } from './channels.ts';
import type { OutboxEventInput } from './outbox-event-input.ts';
import { isUuid, uuidv7 } from './uuid-v7.ts';

export interface EnqueueOptions {
  /** Issue `NOTIFY outbox_event` (delivered at commit) to wake relays at once. Default true. */
  readonly notify?: boolean;
}

/**
 * Inserts one event in the caller's transaction, so it commits (or rolls back) with the
 * business rows. Passing a plain Kysely is a compile error (Transaction is nominal) and, for
 * callers that cast around it, a run-time error.
 */
export async function enqueue<DB extends OutboxTables>(
  trx: Transaction<DB>,
  event: OutboxEventInput,
  options: EnqueueOptions = {},
): Promise<{ eventId: string }> {
  const { eventIds } = await enqueueMany(trx, [event], options);
  const eventId = eventIds[0];
  if (eventId === undefined) throw new Error('enqueue inserted no row');
  return { eventId };
}

/** Inserts several events with one INSERT, in array order (their publish order per key). */
export async function enqueueMany<DB extends OutboxTables>(
  trx: Transaction<DB>,
  events: readonly OutboxEventInput[],
  options: EnqueueOptions = {},
): Promise<{ eventIds: string[] }> {
  // `isTransaction` is true only on a kysely Transaction; JS callers and casts end up here.
  if (typeof trx !== 'object' || trx === null || trx.isTransaction !== true) {
    throw new OutboxError(
      'NOT_A_TRANSACTION',
      'enqueue needs the transaction of the business write (db.transaction().execute(trx => ...)), not a database handle',
    );
  }
  if (events.length === 0) return { eventIds: [] };
  const rows = events.map((event) => toRow(event));
  const db = outboxTrx(trx);
  // pg_current_xact_id() first: the transaction gets its xid BEFORE it draws outbox ids, which
  // is what the relay's commit-order fence relies on (see README, "Ordering"). The NOTIFY is
  // only delivered at commit, so issuing it before the INSERT changes nothing.
  await (
    options.notify === false
      ? sql`SELECT pg_current_xact_id()`
      : sql`SELECT pg_current_xact_id(), pg_notify(${OUTBOX_CHANNEL}, '')`
  ).execute(db);
  await db.insertInto('outbox_event').values(rows).execute();
  return { eventIds: rows.map((row) => row.event_id) };
}

function toRow(event: OutboxEventInput) {
  const eventId = event.eventId ?? uuidv7();
  const invalid = (reason: string) =>
    new OutboxError('INVALID_EVENT', `event ${eventId} (${event.eventType}): ${reason}`);
  if (!isUuid(eventId)) throw invalid('eventId must be a UUID');
  for (const field of ['eventType', 'aggregateType', 'aggregateId', 'topic'] as const) {
    if (typeof event[field] !== 'string' || event[field] === '') throw invalid(`${field} is empty`);
  }
  if (typeof event.partitionKey !== 'string') throw invalid('partitionKey must be a string');
  const payload = JSON.stringify(event.payload);
  if (payload === undefined) throw invalid('payload is not JSON-serialisable');
  return {
    event_id: eventId,
    event_type: event.eventType,
    aggregate_type: event.aggregateType,
    aggregate_id: event.aggregateId,
    topic: event.topic,
    partition_key: event.partitionKey,
    payload,
    headers: JSON.stringify(event.headers ?? {}),
  };
}
