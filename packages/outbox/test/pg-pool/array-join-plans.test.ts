import { randomUUID } from 'node:crypto';
import { genericPlanPool, pollUntil, wholeTableReads } from '@outbox-inbox/infra';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { silentLogger, startInboxProcessor, type OutboxTables } from '../../src/index.ts';
import { recordProcessedEvents } from '../../src/dedup-consumer/record-processed-events.ts';
import { giveBackAttempts } from '../../src/inbox-processor/give-back-attempts.ts';
import { countInboxRepeats } from '../../src/inbox-writer/count-inbox-repeats.ts';
import { createTestDb } from '../support/harness.ts';

/*
 * A pool that prepares its statements (createPgPool) lets PostgreSQL keep a generic plan, made
 * without the values, and such a plan guesses ten rows for an array parameter. Here each
 * statement that joins an array to a library table runs on its generic plan against tables of
 * 2,000 rows (and 2,000 unprocessed ones not yet due, so the unprocessed index is not empty).
 * Without its `event_id = ANY($1)`, the dedup repeat count hash-joined a read of
 * every processed event (processed_event's rows are narrow; the planner reads such a table
 * whole up to several thousand rows). The inbox's rows are wide enough that its statements
 * take the index at this size by themselves (at 1,000 rows they read the table, with or
 * without an `= ANY`, which costs about as much as ten index probes there).
 */

const ROWS = 2000;
let db: Kysely<OutboxTables>;
let destroyDb: () => Promise<void>;
let generic: Kysely<OutboxTables>;
let plans: string[];
const storedIds: string[] = [];

beforeAll(async () => {
  const created = await createTestDb('arrayjoin');
  db = created.db;
  destroyDb = created.destroy;
  const { rows } = await sql<{ event_id: string }>`
    INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type, aggregate_id,
      partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at, processed,
      processed_at)
    SELECT gen_random_uuid(), 'g', 'OrderCreated', 'order', g::text, 'k' || g, '{}', 't', 0, g,
      now(), true, now()
    FROM generate_series(1, ${ROWS}) g
    RETURNING event_id::text`.execute(db);
  storedIds.push(...rows.slice(0, 3).map((row) => row.event_id));
  // A backlog the claims may not take yet (due tomorrow): the unprocessed index is not empty.
  await sql`INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type,
      aggregate_id, partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at,
      next_attempt_at)
    SELECT gen_random_uuid(), 'g', 'OrderCreated', 'order', g::text, 'later' || g, '{}', 't', 2,
      g, now(), now() + interval '1 day'
    FROM generate_series(1, ${ROWS}) g`.execute(db);
  await sql`INSERT INTO processed_event (consumer, event_id)
    SELECT 'c', event_id FROM inbox_event WHERE processed`.execute(db);
  await sql`ANALYZE inbox_event`.execute(db);
  await sql`ANALYZE processed_event`.execute(db);
  const plansPool = genericPlanPool(created.url);
  plans = plansPool.plans;
  generic = new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool: plansPool.pool }) });
});
afterAll(async () => {
  await generic.destroy();
  await destroyDb();
});

it('counts an inbox repeat through the key index, not a read of the whole inbox', async () => {
  plans.length = 0;
  await generic.transaction().execute((trx) => countInboxRepeats(trx, storedIds));
  expect(plans.some((plan) => plan.includes('redeliveries'))).toBe(true);
  expect(wholeTableReads(plans, 'inbox_event')).toEqual([]);
});

it('counts a dedup repeat through the key index, not a read of every processed event', async () => {
  plans.length = 0;
  const isNew = await generic
    .transaction()
    .execute((trx) => recordProcessedEvents(trx, 'c', storedIds));
  expect(isNew).toEqual([false, false, false]);
  expect(plans.some((plan) => plan.includes('redeliveries'))).toBe(true);
  expect(wholeTableReads(plans, 'processed_event')).toEqual([]);
});

it('gives attempts back through the primary key', async () => {
  plans.length = 0;
  await giveBackAttempts(
    generic,
    storedIds.map((eventId) => ({ eventId, attempts: 1 })),
  );
  const giveBack = plans.find((plan) => plan.includes('attempts - 1')) ?? '(no plan)';
  expect(giveBack).toContain('Index Scan using inbox_event_pkey');
  expect(wholeTableReads(plans, 'inbox_event')).toEqual([]);
});

it('processes a claim (count, lock, handle, mark) without reading the whole inbox', async () => {
  const eventId = randomUUID();
  await sql`INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type,
      aggregate_id, partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at)
    VALUES (${eventId}, 'g', 'OrderCreated', 'order', 'a', 'new-key', '{}', 't', 1, 1, now())`.execute(
    db,
  );
  plans.length = 0;
  const processor = startInboxProcessor({
    db: generic,
    handlers: { OrderCreated: async () => undefined },
    logger: silentLogger,
    options: { pollIntervalMs: 50 },
  });
  try {
    await pollUntil(
      async () => {
        const row = await db
          .selectFrom('inbox_event')
          .select('processed')
          .where('event_id', '=', eventId)
          .executeTakeFirstOrThrow();
        return row.processed;
      },
      { timeoutMs: 20_000, description: 'the new inbox row processed' },
    );
  } finally {
    await processor.stop();
  }
  // The lock joins the claimed ids to the inbox: each probed by its key.
  const lock = plans.find((plan) => plan.includes('FOR UPDATE OF i')) ?? '(no plan)';
  expect(lock).toContain('Index Scan using inbox_event_pkey');
  expect(wholeTableReads(plans, 'inbox_event')).toEqual([]);
});
