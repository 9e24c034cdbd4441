import { pollUntil } from '@outbox-inbox/infra';
import pg from 'pg';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

/**
 * How long the sessions stay idle in their transactions, under load: three times the bound an
 * order may stay PENDING, and twice the relays' own idle-in-transaction timeout, so a relay
 * that waited on the sessions' xids could not hide in it.
 */
const idleSeconds = 30;
/** Longest an order accepted meanwhile may stay PENDING: commit → PAID is about a second. */
const settleBoundSeconds = 10;

/**
 * Opens a session on `url` and leaves it idle in a transaction that holds an xid, as an
 * operator's forgotten psql, a migration or another service's batch job does. `work` is what
 * the transaction did before it went idle.
 */
async function idleInTransaction(url: string, work: string[]): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  for (const statement of work) await client.query(statement);
  return client;
}

it("transactions left open for half a minute, in another database and in the service's own, stall no relay: every order settles on time, in order", async () => {
  let oldestPendingSeconds = 0;
  const result = await runScenario('22 idle transactions', {
    inject: async ({ system, acceptedSoFar, fault, note }) => {
      const otherDatabase = system.stack.postgresUrl('postgres');
      await idleInTransaction(otherDatabase, [
        'CREATE TABLE IF NOT EXISTS e2e_idle_probe (at timestamptz NOT NULL)',
      ]).then((client) => client.end());
      // One on another database of the server (an xid of its own), one in order-service's
      // database that never touched the outbox: each holds the cluster's xmin back.
      const sessions = [
        await idleInTransaction(otherDatabase, [
          'BEGIN',
          'INSERT INTO e2e_idle_probe VALUES (now())',
        ]),
        await idleInTransaction(system.stack.postgresUrl(await databaseOf(system.orderDb)), [
          'BEGIN',
          'SELECT pg_current_xact_id()',
        ]),
      ];
      fault('two sessions idle in transaction (postgres database, orders database)');
      const { rows } = await system.orderDb.query<{ now: Date }>('SELECT clock_timestamp() AS now');
      const openedAt = rows[0]?.now ?? new Date();
      const from = acceptedSoFar();
      try {
        // Load goes on the whole time; meanwhile no order accepted after the sessions
        // went idle may wait long for its payment.
        await pollUntil(
          async () => {
            const pending = await system.orderDb.query<{ age: number }>(
              `SELECT coalesce(max(extract(epoch FROM clock_timestamp() - created_at)), 0)::float8 AS age
                 FROM orders WHERE status = 'PENDING' AND created_at > $1`,
              [openedAt],
            );
            oldestPendingSeconds = Math.max(oldestPendingSeconds, pending.rows[0]?.age ?? 0);
            return acceptedSoFar() >= from + defaultRate * idleSeconds;
          },
          {
            timeoutMs: (idleSeconds + 60) * 1000,
            intervalMs: 500,
            description: `${idleSeconds} s of load while the sessions are idle`,
          },
        );
      } finally {
        await Promise.all(sessions.map((session) => session.end()));
      }
      fault('the idle sessions ended');
      note(
        `oldest PENDING order while the sessions were idle: ${oldestPendingSeconds.toFixed(1)} s`,
      );
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.load.refused).toBe(0);
  expect(oldestPendingSeconds).toBeLessThan(settleBoundSeconds);
  expect(result.unexpectedRestarts).toEqual([]);
});

/** The name of the database a pool connects to. */
async function databaseOf(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ name: string }>('SELECT current_database() AS name');
  const name = rows[0]?.name;
  if (name === undefined) throw new Error('the pool answered no database name');
  return name;
}
