import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { OutboxError, startInboxProcessor } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_gray');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

const inboxRow = (eventId: string) =>
  db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();

it('a handler that hangs, in JavaScript or in a query, times out, uses up its attempts and goes dead; other keys flow', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [hangId, sleepId] = await seedInbox(testDb.db, [
    { key: 'hang', eventType: 'HangsInJs', payload: { n: 1 } },
    { key: 'sleep', eventType: 'HangsInQuery', payload: { n: 1 } },
    ...Array.from({ length: 20 }, (_, n) => ({
      key: `ok-${n % 4}`,
      eventType: 'Ok',
      payload: { n },
    })),
  ]);
  const lateWrites: unknown[] = [];
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: {
      concurrency: 2,
      pollIntervalMs: 50,
      maxAttempts: 2,
      handlerTimeoutMs: 300,
      statementTimeoutMs: 5000,
      retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
    },
    handlers: {
      // Outlives its timeout, then tries to write with its closed transaction.
      HangsInJs: async (trx, event) => {
        await new Promise((resolve) => setTimeout(resolve, 600));
        await recordEffect(trx, event).catch((error: unknown) => lateWrites.push(error));
      },
      // Writes, then waits in PostgreSQL far longer than its timeout: cancelled, rolled back.
      HangsInQuery: async (trx, event) => {
        await recordEffect(trx, event);
        await sql`SELECT pg_sleep(3600)`.execute(trx);
      },
      Ok: recordEffect,
    },
  });
  await pollUntil(
    async () =>
      (await count(testDb.db, "effect WHERE partition_key LIKE 'ok-%'")) === 20 &&
      (await count(testDb.db, 'inbox_event WHERE dead_at IS NOT NULL')) === 2,
    { timeoutMs: 30_000, description: 'the healthy keys handled and both hanging rows dead' },
  );
  await pollUntil(() => lateWrites.length === 2, {
    timeoutMs: 10_000,
    description: 'the late writes of both timed-out attempts to be refused',
  });
  await processor.stop();
  for (const id of [hangId, sleepId]) {
    const row = await inboxRow(id ?? '');
    expect(row).toMatchObject({ attempts: 2, processed: false });
    expect(row.last_error).toContain('timed out after 300 ms');
  }
  expect(await count(testDb.db, "effect WHERE partition_key IN ('hang', 'sleep')")).toBe(0);
  expect(lateWrites.every((error) => error instanceof Error)).toBe(true);
  // The cancelled query's session is not left holding anything.
  expect(
    await count(
      testDb.db,
      "pg_stat_activity WHERE query LIKE '%pg_sleep(3600)%' AND state = 'active' AND pid <> pg_backend_pid()",
    ),
  ).toBe(0);
});

const childScript = fileURLToPath(new URL('../fixtures/processor-child.ts', import.meta.url));

/** Runs the processor child until it exits or `until()` holds; returns what it printed. */
async function runChild(
  until: () => Promise<boolean>,
): Promise<{ stdout: string; killed: boolean }> {
  const child = spawn(process.execPath, [childScript], {
    env: {
      ...process.env,
      DATABASE_URL: testDb.url,
      MAX_ATTEMPTS: '3',
      HANDLER_TIMEOUT_MS: '1000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exited = false;
  const exit = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => {
      exited = true;
      resolve(signal);
    }),
  );
  await pollUntil(async () => exited || (await until()), {
    timeoutMs: 30_000,
    description: `the processor child to die or finish (stderr: ${stderr})`,
  });
  if (!exited) child.kill('SIGTERM');
  const signal = await exit;
  return { stdout, killed: signal === 'SIGKILL' };
}

it('a handler that kills its process uses up its attempts across restarts and goes dead; other keys flow', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [crashId, afterCrashId] = await seedInbox(testDb.db, [
    { key: 'crash', eventType: 'Crash', payload: { n: 1 } },
    { key: 'crash', eventType: 'Ok', payload: { n: 2 } },
    ...Array.from({ length: 6 }, (_, n) => ({
      key: `fine-${n % 2}`,
      eventType: 'Ok',
      payload: { n },
    })),
  ]);
  const settled = async () =>
    (await count(testDb.db, 'inbox_event WHERE dead_at IS NOT NULL')) === 1 &&
    (await count(testDb.db, "effect WHERE partition_key LIKE 'fine-%'")) === 6;
  let handled = 0;
  let deaths = 0;
  // Like a supervisor: restart the process each time it dies, a bounded number of times.
  for (let run = 0; run < 6 && !(await settled()); run++) {
    const { stdout, killed } = await runChild(settled);
    handled += stdout.split('\n').filter((line) => line === `HANDLING ${crashId}`).length;
    if (killed) deaths += 1;
  }
  const row = await inboxRow(crashId ?? '');
  expect(row).toMatchObject({ attempts: 3, processed: false });
  expect(row.dead_at).not.toBeNull();
  expect(row.last_error).toMatch(/^3 attempt\(s\) started and none finished/);
  expect({ handled, deaths }).toEqual({ handled: 3, deaths: 3 });
  expect(await count(testDb.db, "effect WHERE partition_key LIKE 'fine-%'")).toBe(6);
  // The dead row holds back its own key only.
  expect((await inboxRow(afterCrashId ?? '')).processed).toBe(false);
});

it('refuses a handler timeout that is not below the statement timeout', () => {
  const start = (options: object) =>
    startInboxProcessor<EffectDb>({ db, logger: recordingLogger(), handlers: {}, options });
  expect(() => start({ handlerTimeoutMs: 30_000, statementTimeoutMs: 30_000 })).toThrow(
    OutboxError,
  );
  expect(() => start({ handlerTimeoutMs: 30_000, statementTimeoutMs: 30_000 })).toThrow(
    /handlerTimeoutMs \(30000\) must be below statementTimeoutMs \(30000\)/,
  );
  expect(() => start({ maxAttempts: 0 })).toThrow(/maxAttempts must be a whole number/);
});

it('the beforeHandler hook runs inside the attempt: while it hangs, attempts time out and count; then the handler runs', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [id] = await seedInbox(testDb.db, [{ key: 'hooked', eventType: 'Ok', payload: { n: 1 } }]);
  let hanging = true;
  const hookedIds: string[] = [];
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    handlers: { Ok: recordEffect },
    hooks: {
      beforeHandler: (event) => {
        hookedIds.push(event.eventId);
        return hanging ? new Promise<void>(() => undefined) : undefined;
      },
    },
    options: {
      pollIntervalMs: 50,
      maxAttempts: 10,
      handlerTimeoutMs: 200,
      statementTimeoutMs: 5000,
      retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
    },
  });
  try {
    await pollUntil(async () => ((await inboxRow(id ?? '')).attempts >= 2 ? true : undefined), {
      timeoutMs: 10_000,
      description: 'two attempts to time out in the hook',
    });
    expect((await inboxRow(id ?? '')).last_error).toContain('timed out after 200 ms');
    expect(await count(testDb.db, 'effect')).toBe(0);
    hanging = false;
    await pollUntil(async () => (await inboxRow(id ?? '')).processed, {
      timeoutMs: 10_000,
      description: 'the row to be handled once the hook lets it through',
    });
  } finally {
    await processor.stop();
  }
  expect(await count(testDb.db, 'effect')).toBe(1);
  expect(new Set(hookedIds)).toEqual(new Set([id]));
});
