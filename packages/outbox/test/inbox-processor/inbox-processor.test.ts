import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { startInboxProcessor } from '../../src/index.ts';
import { discardDeadInboxEvents, requeueDeadInboxEvents } from '../../src/ops.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_processor');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

it('handles each key in order with one row in flight per key; a poison row goes dead and holds only its own key', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const seeds = [];
  for (let n = 0; n < 30; n++) {
    for (const key of ['a', 'b', 'c']) seeds.push({ key, eventType: 'Ok', payload: { n } });
    if (n === 5) seeds.push({ key: 'p', eventType: 'Poison', payload: { n } });
    if (n > 5 && n < 9) seeds.push({ key: 'p', eventType: 'Ok', payload: { n } });
  }
  seeds.push({ key: 'u', eventType: 'NobodyHandlesThis', payload: { n: 0 } });
  const ids = await seedInbox(testDb.db, seeds);
  const poisonId = ids[seeds.findIndex((s) => s.eventType === 'Poison')] ?? '';
  const unknownId = ids[ids.length - 1] ?? '';

  const inFlight = new Set<string>();
  const overlaps: string[] = [];
  const logger = recordingLogger();
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger,
    options: {
      concurrency: 3,
      pollIntervalMs: 50,
      maxAttempts: 3,
      retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
    },
    handlers: {
      Ok: async (trx, event) => {
        if (inFlight.has(event.partitionKey)) overlaps.push(event.partitionKey);
        inFlight.add(event.partitionKey);
        try {
          await recordEffect(trx, event);
          await sql`SELECT pg_sleep(0.002)`.execute(trx);
        } finally {
          inFlight.delete(event.partitionKey);
        }
      },
      Poison: async () => {
        throw new Error('cannot handle this payload');
      },
    },
  });
  await pollUntil(
    async () => (await count(testDb.db, "effect WHERE partition_key IN ('a','b','c')")) === 90,
    {
      timeoutMs: 30_000,
      description: 'every event of the healthy keys handled',
    },
  );
  await pollUntil(
    async () => (await count(testDb.db, 'inbox_event WHERE dead_at IS NOT NULL')) === 2,
    {
      timeoutMs: 30_000,
      description: 'the poison row and the unknown type to be dead',
    },
  );
  const poison = await db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', poisonId)
    .executeTakeFirstOrThrow();
  expect(poison).toMatchObject({ attempts: 3, processed: false });
  expect(poison.last_error).toContain('cannot handle this payload');
  const unknown = await db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', unknownId)
    .executeTakeFirstOrThrow();
  expect(unknown.last_error).toBe('no handler for event type "NobodyHandlesThis"');
  // Events of p before the poison row were handled; the ones after it wait (ordering).
  expect(await count(testDb.db, "effect WHERE partition_key = 'p'")).toBe(0);
  expect(await count(testDb.db, "inbox_event WHERE partition_key = 'p' AND NOT processed")).toBe(4);

  // The operator discards the poison row: p's later events flow, in order.
  expect(await discardDeadInboxEvents(db, [poisonId])).toBe(1);
  await pollUntil(async () => (await count(testDb.db, "effect WHERE partition_key = 'p'")) === 3, {
    timeoutMs: 20_000,
    description: "p's later events after the discard",
  });
  // Requeue sends the unknown-type row round again (still no handler: dead again).
  expect(await requeueDeadInboxEvents(db, [unknownId])).toBe(1);
  await pollUntil(
    async () =>
      (
        await db
          .selectFrom('inbox_event')
          .select('attempts')
          .where('event_id', '=', unknownId)
          .where('dead_at', 'is not', null)
          .executeTakeFirst()
      )?.attempts === 1,
    { timeoutMs: 20_000, description: 'the requeued row to be tried again' },
  );
  await processor.stop();

  expect(overlaps).toEqual([]);
  const effects = await db
    .selectFrom('effect')
    .select(['partition_key', 'n'])
    .orderBy('seq')
    .execute();
  for (const key of ['a', 'b', 'c', 'p']) {
    const ns = effects.filter((e) => e.partition_key === key).map((e) => e.n);
    expect(ns).toEqual([...ns].sort((x, y) => x - y));
  }
  expect(await count(testDb.db, 'inbox_event WHERE NOT processed')).toBe(1);
});

const childScript = fileURLToPath(new URL('../fixtures/processor-child.ts', import.meta.url));

it('a processor SIGKILLed mid-handler leaves the row to be retried; the effect happens once', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [first, second] = await seedInbox(testDb.db, [
    { key: 'k', eventType: 'Slow', payload: { n: 1 } },
    { key: 'k', eventType: 'Slow', payload: { n: 2 } },
  ]);
  const child = spawn(process.execPath, [childScript], {
    env: { ...process.env, DATABASE_URL: testDb.url, HANDLER_TIMEOUT_MS: '3000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_c, signal) => resolve(signal)),
  );
  await pollUntil(() => stdout.includes(`HANDLING ${first}`), {
    timeoutMs: 20_000,
    description: `the child to be inside the handler (stderr: ${stderr})`,
  });
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  // PostgreSQL rolls the dead session back (it may take a moment to notice the closed socket).
  await pollUntil(
    async () =>
      (await count(testDb.db, 'effect')) === 0 &&
      (await count(testDb.db, "pg_stat_activity WHERE state = 'idle in transaction'")) === 0,
    {
      timeoutMs: 20_000,
      description: 'the killed transaction to be rolled back',
    },
  );
  const row = await db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', first ?? '')
    .executeTakeFirstOrThrow();
  // The attempt was counted before the handler ran, although the process died inside it.
  expect(row).toMatchObject({ processed: false, attempts: 1, dead_at: null });

  // The killed attempt's lease (the child's handler timeout) ends first: then it is due again.
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: { pollIntervalMs: 50 },
    handlers: { Slow: recordEffect },
  });
  await pollUntil(async () => (await count(testDb.db, 'inbox_event WHERE processed')) === 2, {
    timeoutMs: 20_000,
    description: 'both rows processed after the restart',
  });
  await processor.stop();
  const effects = await db.selectFrom('effect').select(['event_id', 'n']).orderBy('seq').execute();
  expect(effects).toEqual([
    { event_id: first, n: 1 },
    { event_id: second, n: 2 },
  ]);
});
