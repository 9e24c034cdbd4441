import type { KyselyPlugin } from 'kysely';
import { PassThroughPlugin } from '../internal/pass-through-plugin.ts';

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
