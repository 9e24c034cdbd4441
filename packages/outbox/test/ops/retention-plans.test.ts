import { genericPlanPool, wholeTableReads } from '@outbox-inbox/infra';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutboxTables } from '../../src/index.ts';
import { runRetention, runRetentionExclusively } from '../../src/ops.ts';
import { createTestDb } from '../support/harness.ts';

/*
 * Retention repeats one DELETE text batch after batch and run after run, so a pool that prepares
 * its statements lets PostgreSQL keep a generic plan for it: made without the cutoff, it guesses
 * that a third of the table is older, and reads the whole table for a batch. Here every
 * statement runs on a generic plan unless the batch's transaction says otherwise, over 3,000
 * recent rows published in no order and a few old ones: each batch must reach the old rows by
 * the age index. (Without the batch's setting both tests saw a sequential scan.)
 */

const DAY = 86_400_000;
const RECENT = 3000;
let db: Kysely<OutboxTables>;
let destroyDb: () => Promise<void>;
let generic: Kysely<OutboxTables>;
let plans: string[];

/** Rows published up to a day before `daysAgo`, in no order (as several relays mark them). */
async function addOutboxRows(count: number, daysAgo: number): Promise<void> {
  const at = sql`now() - make_interval(days => ${daysAgo}, secs => random() * 86400)`;
  await sql`INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload,
      headers, topic, partition_key, created_at, published_at)
    SELECT gen_random_uuid(), 'order', g::text, 'OrderCreated', '{}', '{}', 't', 'k' || g, ${at},
      ${at}
    FROM generate_series(1, ${count}) g`.execute(db);
}

beforeAll(async () => {
  const created = await createTestDb('retention_plans');
  db = created.db;
  destroyDb = created.destroy;
  await addOutboxRows(RECENT, 0);
  await sql`ANALYZE outbox_event`.execute(db);
  const plansPool = genericPlanPool(created.url);
  plans = plansPool.plans;
  generic = new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool: plansPool.pool }) });
});
afterAll(async () => {
  await generic.destroy();
  await destroyDb();
});

it('a retention run (the job and the CLI) reaches the old rows by the age index, not a read of the whole outbox', async () => {
  await addOutboxRows(5, 30);
  plans.length = 0;
  const result = await runRetentionExclusively(generic, { olderThan: 7 * DAY });
  expect(result?.outboxDeleted).toBe(5);
  expect(plans.some((plan) => plan.includes('Delete on outbox_event'))).toBe(true);
  expect(wholeTableReads(plans, 'outbox_event')).toEqual([]);
});

it('so does runRetention, without the lock', async () => {
  await addOutboxRows(5, 30);
  plans.length = 0;
  const result = await runRetention(generic, { olderThan: 7 * DAY });
  expect(result.outboxDeleted).toBe(5);
  expect(plans.some((plan) => plan.includes('Delete on outbox_event'))).toBe(true);
  expect(wholeTableReads(plans, 'outbox_event')).toEqual([]);
});
