import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Stack } from '../src/index.ts';

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function backendPid(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return rows[0]?.pid ?? -1;
}

describe("a stack's PgBouncer", () => {
  it('pools in transaction mode: two sessions share one server connection between transactions; kill, start and down work on it', async () => {
    const stack = await Stack.up({
      name: `pgbouncer-${process.pid}`,
      servers: ['postgres'],
      env: { ...process.env, STACK_PROVIDER: 'local' },
    });
    try {
      await stack.addPgBouncer({ poolSize: 1 });
      const url = await stack.createDatabase('pooled');
      const pooled = stack.pooledPostgresUrl('pooled');
      expect(pooled).not.toBe(url);
      // With one server connection, a second session is served only because the first one
      // holds it for a transaction at a time, not for its whole session.
      const first = await connected(pooled);
      const second = await connected(pooled);
      try {
        const pids = [await backendPid(first), await backendPid(second), await backendPid(first)];
        expect(new Set(pids).size).toBe(1);
        const { rows } = await second.query<{ db: string }>('SELECT current_database() AS db');
        expect(rows[0]?.db).toBe('pooled');
      } finally {
        await Promise.all([first.end(), second.end()]);
      }

      expect(stack.isRunning('pgbouncer')).toBe(true);
      expect(await stack.kill('pgbouncer')).toBe(true);
      await expect(connected(pooled)).rejects.toThrow();
      await stack.start('pgbouncer');
      const again = await connected(pooled);
      await again.end();
      const logFile = stack.logFile('pgbouncer') ?? '';
      expect(existsSync(logFile)).toBe(true);
    } finally {
      await stack.down();
    }
    expect(Stack.openIfExists(`pgbouncer-${process.pid}`)).toBeUndefined();
  });
});
