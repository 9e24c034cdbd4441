import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Stack, findFreePort, pollUntil } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import pg from 'pg';
import { pino } from 'pino';
import { expect, inject, it } from 'vitest';
import { migrateDatabase } from '../../src/index.ts';

const serviceDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function startRetention(env: Record<string, string>) {
  const child = spawn(process.execPath, ['src/main.ts', '--roles', 'retention'], {
    cwd: serviceDir,
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, exited, output: () => output };
}

it('refuses an inbox window shorter than the dedup window, naming the variable', async () => {
  const refused = startRetention({
    DATABASE_URL: 'postgres://localhost/x',
    RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: '3600',
    RETENTION_INBOX_WINDOW_SECONDS: '60',
  });
  expect(await refused.exited).toBe(1);
  expect(refused.output()).toContain(
    'RETENTION_INBOX_WINDOW_SECONDS must be at least RETENTION_PROCESSED_EVENT_WINDOW_SECONDS (3600)',
  );
});

it('deletes idempotency keys older than the retry window, keeps younger ones, and reports it', async () => {
  const stack = Stack.open(inject('stackName'));
  const url = await stack.createDatabase(`orders_retention_${randomUUID().slice(0, 8)}`);
  await migrateDatabase({ url, logger: pino({ level: 'silent' }) });
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query(`INSERT INTO idempotency_key (key, request_hash, created_at) VALUES
    ('old', 'h', now() - interval '2 minutes'), ('young', 'h', now())`);
  const port = await findFreePort();
  const role = startRetention({
    DATABASE_URL: url,
    OPS_PORT: String(port),
    HOST: '127.0.0.1',
    RETENTION_INTERVAL_SECONDS: '1',
    RETENTION_IDEMPOTENCY_KEY_WINDOW_SECONDS: '60',
  });
  try {
    const keys = async () =>
      (await db.query<{ key: string }>('SELECT key FROM idempotency_key ORDER BY key')).rows.map(
        (row) => row.key,
      );
    await pollUntil(async () => (await keys()).length === 1, {
      timeoutMs: 30_000,
      description: 'the old idempotency key deleted',
    });
    expect(await keys()).toEqual(['young']);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^outbox_retention_deleted_rows_total\{table="idempotency_key"\} 1$/m);
    expect(metrics).toMatch(/^outbox_retention_runs_total\{outcome="completed"\} [1-9]/m);
    expect(metrics).toMatch(/^outbox_retention_last_run_timestamp_seconds [1-9]/m);
    role.child.kill('SIGTERM');
    expect(await role.exited).toBe(0);
  } finally {
    role.child.kill('SIGKILL');
    await db.end();
  }
});
