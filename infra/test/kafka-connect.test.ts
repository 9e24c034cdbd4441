import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { beforeAll, expect, inject, it } from 'vitest';
import { Stack, findRepoRoot, pollUntil } from '../src/index.ts';

const stack = Stack.open(inject('stackName'));
let added = '';

/** GET /connectors: the worker answers it once it has joined its group. */
async function listConnectors(): Promise<unknown> {
  const response = await fetch(`${stack.connectUrl}/connectors`, {
    signal: AbortSignal.timeout(5000),
  });
  expect(response.status).toBe(200);
  return response.json();
}

// From a shell, as a workshop adds it to a running `pnpm dev` (Stack.addServer underneath).
beforeAll(() => {
  const root = findRepoRoot();
  added = execFileSync(
    'bash',
    [path.join(root, 'pnpm'), 'stack', 'add', 'connect', `--name=${inject('stackName')}`],
    { cwd: root, encoding: 'utf8' },
  );
}, 240_000);

it('Kafka Connect runs as a distributed worker whose state lives in Kafka topics', async () => {
  expect(added).toContain(`connect: running  url=${stack.connectUrl}`);
  const connect = stack.status().find((component) => component.name === 'connect');
  expect(connect?.running).toBe(true);
  expect(connect?.endpoints['url']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await listConnectors()).toEqual([]);

  const admin = new Kafka({
    clientId: 'connect-test',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  const internalTopics = ['connect-configs', 'connect-offsets', 'connect-status'];
  try {
    // The worker answers its REST API while it may still be creating its config topic (seen
    // in a CI run: offsets and status listed, configs not yet): wait for the three.
    let topics: string[] = [];
    await pollUntil(
      async () => {
        topics = await admin.listTopics();
        return internalTopics.every((topic) => topics.includes(topic));
      },
      { timeoutMs: 30_000, description: `Connect's internal topics ${internalTopics.join(', ')}` },
    );
    expect(topics).toEqual(expect.arrayContaining(internalTopics));
  } finally {
    await admin.disconnect();
  }
  const logFile = stack.logFile('connect') ?? '';
  expect(existsSync(logFile)).toBe(true);
  expect(readFileSync(logFile, 'utf8')).toContain('Kafka Connect started');
}, 60_000);

it('has the controls of every component: kill, start, pause, resume', async () => {
  expect(await stack.kill('connect')).toBe(true);
  expect(stack.isRunning('connect')).toBe(false);
  await stack.start('connect');
  expect(await listConnectors()).toEqual([]);

  stack.pause('connect');
  expect(stack.status().find((component) => component.name === 'connect')?.paused).toBe(true);
  await expect(
    fetch(`${stack.connectUrl}/connectors`, { signal: AbortSignal.timeout(1000) }),
  ).rejects.toThrow();
  stack.resume('connect');
  expect(await listConnectors()).toEqual([]);
}, 240_000);

it("the stack's PostgreSQL decodes its WAL for logical replication (the CDC relay)", async () => {
  const client = new pg.Client({ connectionString: stack.postgresUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ wal_level: string }>('SHOW wal_level');
    expect(rows[0]?.wal_level).toBe('logical');
  } finally {
    await client.end();
  }
});
