import { sql, type Generated, type Kysely, type Transaction } from 'kysely';
import type { OutboxTables, ReceivedEvent } from '../../src/index.ts';
import type { TestDb } from './harness.ts';

/**
 * The service side of a test: one row per handled event, in handling order (`seq`). `source`
 * tells apart workers that handle the same events (an inbox processor and a dedup consumer);
 * `answer` is what a calling handler's `call` returned.
 */
export interface EffectTable {
  seq: Generated<string>;
  source: Generated<string>;
  event_id: string;
  partition_key: string;
  n: number;
  answer: string | null;
}
export type EffectDb = OutboxTables & { effect: EffectTable };

/** Adds the `effect` table to a test database; returns the database typed with it. */
export async function createEffectTable(testDb: TestDb): Promise<Kysely<EffectDb>> {
  const db = testDb.db.withTables<{ effect: EffectTable }>();
  await sql`CREATE TABLE effect (
    seq bigint GENERATED ALWAYS AS IDENTITY,
    source text NOT NULL DEFAULT 'handler',
    event_id uuid NOT NULL,
    partition_key text NOT NULL,
    n integer NOT NULL,
    answer text,
    PRIMARY KEY (source, event_id))`.execute(db);
  return db;
}

/**
 * A handler's effect: the event's row (its payload is `{ n }`), written in the handler's
 * transaction. A second effect of one event from one source breaks the primary key, so a test
 * sees a repeat as a failure, not as a second row.
 */
export async function recordEffect(
  trx: Transaction<EffectDb>,
  event: ReceivedEvent,
  fields: { readonly source?: string; readonly answer?: string } = {},
): Promise<void> {
  const { n } = event.payload as { n: number };
  await trx
    .insertInto('effect')
    .values({ event_id: event.eventId, partition_key: event.partitionKey, n, ...fields })
    .execute();
}
