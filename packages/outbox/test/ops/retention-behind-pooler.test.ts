import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPgPool, silentLogger, type OutboxTables } from '../../src/index.ts';
import { runRetentionExclusively } from '../../src/ops.ts';
import { stack, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('retention_pooled');
const runs = 20;

beforeAll(async () => {
  await stack().addPgBouncer({ poolSize: 3 });
});
afterAll(async () => {
  await stack().stop('pgbouncer');
});

/**
 * Clients that keep the pooler's few server connections busy with short transactions, as a
 * service's other roles do: a client's next statement then often lands on another server
 * connection than its last one.
 */
function busyClients(url: string, count: number): { stop(): Promise<void> } {
  let running = true;
  const loops = Array.from({ length: count }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    while (running) {
      await client.query('BEGIN');
      await client.query('SELECT pg_sleep(0.003)');
      await client.query('COMMIT');
    }
    await client.end();
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

it('behind PgBouncer in transaction mode, retention runs one after another are never refused, and leave no lock behind', async () => {
  const database = new URL(testDb.url).pathname.slice(1);
  const pooledUrl = stack().pooledPostgresUrl(database);
  const pooled = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: pooledUrl, max: 2 }, silentLogger, {
        prepareStatements: false,
      }),
    }),
  });
  const busy = busyClients(pooledUrl, 4);
  const outcomes: string[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const result = await runRetentionExclusively(pooled, {
        olderThan: 86_400_000,
        processedEventsOlderThan: 86_400_000,
        parkedOlderThan: 86_400_000,
        batchSize: 1,
      });
      outcomes.push(result === undefined ? 'refused' : 'ran');
    }
  } finally {
    await busy.stop();
    await pooled.destroy();
  }
  // Nobody else ran retention: a refusal is the run's own lock, left on a server connection.
  expect(outcomes.filter((outcome) => outcome === 'refused')).toEqual([]);
  const held = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_locks
     WHERE locktype = 'advisory'
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  `.execute(testDb.db);
  expect(held.rows[0]?.n).toBe(0);
});
