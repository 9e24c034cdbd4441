import { sql, type Generated, type Kysely } from 'kysely';
import type { OutboxTables } from '../../src/index.ts';
import type { TestDb } from './harness.ts';

/** A service's own table that a dedup consumer's effects change: an order and its payments. */
export interface OrderTable {
  id: string;
  status: string;
  payments: Generated<number>;
  note: string | null;
}
export type OrderDb = OutboxTables & { orders: OrderTable };

/** Adds the `orders` table to a test database; returns the database typed with it. */
export async function createOrderTable(testDb: TestDb): Promise<Kysely<OrderDb>> {
  const db = testDb.db.withTables<{ orders: OrderTable }>();
  await sql`CREATE TABLE orders (
    id text PRIMARY KEY,
    status text NOT NULL,
    payments integer NOT NULL DEFAULT 0,
    note text)`.execute(db);
  return db;
}
