import { sql, type KyselyPlugin } from 'kysely';
import { PassThroughPlugin } from '../internal/pass-through-plugin.ts';

/**
 * The advisory lock every outbox writer holds, shared, from before it has an xid for its
 * outbox rows to the end of its transaction (`enqueue` takes it). Two-int form: PostgreSQL
 * keeps it apart from every single-bigint key (`RETENTION_LOCK_ID` is one), and the values
 * spell "outb" "ox-w". Shared: writers never wait for each other; nothing takes it exclusive.
 * Code that inserts outbox rows without `enqueue` must take it first, in the same way.
 */
export const OUTBOX_WRITER_LOCK = Object.freeze([1_869_968_482, 1_870_146_935] as const);

/**
 * Takes the writer lock and assigns the transaction's xid, in that order, in one statement:
 * by the time a claim can see the xid in progress, the lock is visible in `pg_locks`.
 */
export const ANNOUNCE_WRITER = sql.raw(
  `pg_advisory_xact_lock_shared(${OUTBOX_WRITER_LOCK[0]}, ${OUTBOX_WRITER_LOCK[1]}), pg_current_xact_id()`,
);

/**
 * Marks a transaction that took the outbox writer lock and its xid already (the inbox
 * processor does both in the statement that locks its claimed rows), so `enqueue` in it need
 * not send the statement that announces the writer: the fence's order (lock and xid before
 * any outbox id is drawn) holds from that earlier statement on. Changes no query.
 */
export class AnnouncedWriter extends PassThroughPlugin {}

/** Whether `trx` carries the mark (a plugin survives `withPlugin` and `withTables`). */
export function isAnnouncedWriter(trx: {
  getExecutor(): { readonly plugins: readonly KyselyPlugin[] };
}): boolean {
  return trx.getExecutor().plugins.some((plugin) => plugin instanceof AnnouncedWriter);
}
