import type { Kysely, Transaction } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';

// Kysely<DB> is invariant in DB, so a service's Kysely<ServiceDB & OutboxTables> is not a
// Kysely<OutboxTables>. These views narrow it without a double cast: the tables the library
// touches exist because DB extends OutboxTables (checked at every public entry point).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTables = any;

export function outboxDb<DB>(db: Kysely<DB>): Kysely<OutboxTables> {
  const view: Kysely<AnyTables> = db;
  return view;
}

export function outboxTrx<DB>(trx: Transaction<DB>): Transaction<OutboxTables> {
  const view: Transaction<AnyTables> = trx;
  return view;
}
