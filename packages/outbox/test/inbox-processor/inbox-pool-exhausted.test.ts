import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { createPgPool, startInboxProcessor, type CallingInboxHandler } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_pool');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

const POOL_SIZE = 2;
/** More rounds than attempts: each round counted would walk the rows to dead. */
const ROUNDS = 4;
const MAX_ATTEMPTS = 2;

/**
 * Once per claim: every connection of `pool` checked out into a slow query that outlasts the
 * pool's connection timeout, so the claim's write finds no connection. The calls of one claim
 * share the round.
 */
function poolExhauster(pool: pg.Pool) {
  let rounds = 0;
  let busy: Promise<void> | undefined;
  const exhaust = (): Promise<void> =>
    (busy ??= (async () => {
      const clients = await Promise.all(Array.from({ length: POOL_SIZE }, () => pool.connect()));
      rounds++;
      void Promise.all(clients.map((client) => client.query('SELECT pg_sleep(0.5)'))).then(() => {
        busy = undefined;
        for (const client of clients) client.release();
      });
    })());
  return {
    exhaust,
    get rounds() {
      return rounds;
    },
  };
}

it('a claim whose write finds the pool exhausted while PostgreSQL is slow gives its attempts back: nothing goes dead, each row is handled once', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const ids = await seedInbox(testDb.db, [
    { key: 'a', eventType: 'Pay', payload: { n: 1 } },
    { key: 'b', eventType: 'Pay', payload: { n: 1 } },
    { key: 'c', eventType: 'Plain', payload: { n: 1 } },
    { key: 'a', eventType: 'Pay', payload: { n: 2 } },
    { key: 'b', eventType: 'Pay', payload: { n: 2 } },
    { key: 'c', eventType: 'Plain', payload: { n: 2 } },
  ]);
  const logger = recordingLogger();
  const pool = createPgPool(
    { connectionString: testDb.url, max: POOL_SIZE, connectionTimeoutMillis: 150 },
    logger,
  );
  const processorDb = new Kysely<EffectDb>({ dialect: new PostgresDialect({ pool }) });
  const exhauster = poolExhauster(pool);
  const processor = startInboxProcessor<EffectDb>({
    db: processorDb,
    logger,
    options: {
      concurrency: 1,
      pollIntervalMs: 50,
      maxAttempts: MAX_ATTEMPTS,
      // The lease: on a claim that counted its attempt, the rows are due again after it.
      handlerTimeoutMs: 1000,
      statementTimeoutMs: 5000,
      backoff: { initialMs: 20, maxMs: 100, multiplier: 2 },
      retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
    },
    handlers: {
      // The call holds no connection; while it returns, the pool fills up with slow queries.
      Pay: {
        async call(event) {
          if (exhauster.rounds < ROUNDS) await exhauster.exhaust();
          return `charged ${event.eventId}`;
        },
        apply: (trx, event, answer) => recordEffect(trx, event, { answer }),
      } satisfies CallingInboxHandler<EffectDb, string>,
      // Claimed with the calling rows: its write waits on the same exhausted pool.
      Plain: recordEffect,
    },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'inbox_event WHERE processed')) === ids.length ||
        (await count(testDb.db, 'inbox_event WHERE dead_at IS NOT NULL')) > 0,
      { timeoutMs: 30_000, description: 'every row processed, or one dead' },
    );
  } finally {
    await processor.stop();
    await processorDb.destroy();
  }
  const rows = await db
    .selectFrom('inbox_event')
    .select(['event_id', 'processed', 'dead_at', 'attempts', 'last_error'])
    .execute();
  expect(rows.filter((row) => row.dead_at !== null)).toEqual([]);
  expect(exhauster.rounds).toBe(ROUNDS);
  // Only the attempt whose write began is counted: the failed acquisitions gave theirs back.
  for (const row of rows) expect(row).toMatchObject({ processed: true, attempts: 1 });
  const effects = await db.selectFrom('effect').select('event_id').execute();
  expect(effects.map((effect) => effect.event_id).sort()).toEqual([...ids].sort());
  // Each round's write did wait for the pool in vain (logged once as a warn, then as debug).
  const unstarted = logger.lines.filter((line) =>
    line.msg.includes('write transaction did not start: Error: timeout exceeded'),
  );
  expect(unstarted.length).toBe(ROUNDS);
});
