import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { Stack } from '../src/index.ts';

async function durability(url: string): Promise<{ fsync: string; full_page_writes: string }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ fsync: string; full_page_writes: string }>(
      `SELECT current_setting('fsync') AS fsync, current_setting('full_page_writes') AS full_page_writes`,
    );
    return rows[0] ?? { fsync: '?', full_page_writes: '?' };
  } finally {
    await client.end();
  }
}

describe("a stack's PostgreSQL", () => {
  it('runs without fsync for tests, and as crash safe as production when durable (benchmarks)', async () => {
    const tests = Stack.open(inject('stackName'));
    expect(await durability(tests.postgresUrl())).toEqual({
      fsync: 'off',
      full_page_writes: 'off',
    });

    const durable = await Stack.up({
      name: `durable-${process.pid}`,
      servers: ['postgres'],
      durable: true,
      env: { ...process.env, STACK_PROVIDER: 'local' },
    });
    try {
      expect(await durability(durable.postgresUrl())).toEqual({
        fsync: 'on',
        full_page_writes: 'on',
      });
    } finally {
      await durable.down();
    }
  });
});
