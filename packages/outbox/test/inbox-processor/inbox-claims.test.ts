import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { claimInboxRows } from '../../src/inbox-processor/claim-inbox-rows.ts';
import { startInboxProcessor, type TransactionalInboxHandler } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_claims');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

const claimOptions = { limit: 16, maxAttempts: 5, leaseMs: 60_000 };

async function reset(): Promise<void> {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
}

/** Rows seeded as if earlier attempts had been counted (and their lease were over). */
async function markTried(eventIds: readonly string[]): Promise<void> {
  await sql`UPDATE inbox_event SET attempts = 1 WHERE event_id = ANY(${eventIds}::uuid[])`.execute(
    db,
  );
}

it('a claim takes the heads of several keys, never two rows of one key, oldest first', async () => {
  await reset();
  await seedInbox(testDb.db, [
    { key: 'a', eventType: 'Ok', payload: { n: 1 } },
    { key: 'a', eventType: 'Ok', payload: { n: 2 } },
    { key: 'b', eventType: 'Ok', payload: { n: 1 } },
    { key: 'c', eventType: 'Ok', payload: { n: 1 } },
  ]);
  const first = await claimInboxRows(testDb.db, claimOptions);
  expect(first.rows.map((row) => [row.partition_key, row.attempts])).toEqual([
    ['a', 1],
    ['b', 1],
    ['c', 1],
  ]);
  // Every due head taken; a's second row is due once its head is done.
  expect(first).toMatchObject({ headsLeft: false, keysContinue: true });
  // Claimed and leased: a second claim finds nothing due (a's second row waits for its head).
  expect((await claimInboxRows(testDb.db, claimOptions)).rows).toEqual([]);
});

it('a row tried before is claimed alone, and first attempts do not share a claim with it', async () => {
  await reset();
  const [retried = '', , later = ''] = await seedInbox(testDb.db, [
    { key: 'retried', eventType: 'Ok' },
    { key: 'fresh-1', eventType: 'Ok' },
    { key: 'retried-later', eventType: 'Ok' },
    { key: 'fresh-2', eventType: 'Ok' },
  ]);
  await markTried([retried, later]);
  const alone = await claimInboxRows(testDb.db, claimOptions);
  expect(alone.rows.map((row) => row.partition_key)).toEqual(['retried']);
  // The heads it left are due now: another worker may claim them at once.
  expect(alone).toMatchObject({ headsLeft: true, keysContinue: false });
  // The oldest due row is a first attempt: the claim takes the first attempts only.
  const fresh = (await claimInboxRows(testDb.db, claimOptions)).rows;
  expect(fresh.map((row) => row.partition_key)).toEqual(['fresh-1', 'fresh-2']);
  const last = await claimInboxRows(testDb.db, claimOptions);
  expect(last.rows.map((row) => [row.partition_key, row.attempts])).toEqual([['retried-later', 2]]);
  expect(last).toMatchObject({ headsLeft: false, keysContinue: false });
});

it('a claim takes no more rows than its limit', async () => {
  await reset();
  await seedInbox(
    testDb.db,
    Array.from({ length: 5 }, (_, n) => ({ key: `k-${n}`, eventType: 'Ok' })),
  );
  const claims = [];
  for (let n = 0; n < 3; n++)
    claims.push(await claimInboxRows(testDb.db, { ...claimOptions, limit: 2 }));
  expect(claims.map((claim) => claim.rows.length)).toEqual([2, 2, 1]);
  // A full claim may have left heads behind; the short one says it did not.
  expect(claims.map((claim) => claim.headsLeft)).toEqual([true, true, false]);
});

/** Records its effect, then fails for payloads marked `fail`, or never settles for `hang`. */
const effectThenFault: TransactionalInboxHandler<EffectDb> = async (trx, event) => {
  await recordEffect(trx, event);
  const { fault } = event.payload as { fault?: 'fail' | 'hang' };
  if (fault === 'fail') throw new Error('refused by the handler');
  if (fault === 'hang') await new Promise<never>(() => undefined);
};

it('a row whose handler throws or hangs in a shared claim rolls back alone; the others commit once, together', async () => {
  await reset();
  const seeds = [
    { key: 'ok-1', eventType: 'Ok', payload: { n: 1 } },
    { key: 'fails', eventType: 'Ok', payload: { n: 1, fault: 'fail' } },
    { key: 'ok-2', eventType: 'Ok', payload: { n: 1 } },
    { key: 'hangs', eventType: 'Ok', payload: { n: 1, fault: 'hang' } },
    { key: 'ok-3', eventType: 'Ok', payload: { n: 1 } },
  ];
  await seedInbox(testDb.db, seeds);
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    // One worker and rows seeded before it starts: its first claim takes all five.
    options: {
      concurrency: 1,
      pollIntervalMs: 50,
      maxAttempts: 1,
      handlerTimeoutMs: 300,
      statementTimeoutMs: 5000,
    },
    handlers: { Ok: effectThenFault },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'inbox_event WHERE processed OR dead_at IS NOT NULL')) === 5
          ? true
          : undefined,
      { timeoutMs: 30_000, description: 'every row processed or dead' },
    );
  } finally {
    await processor.stop();
  }
  const effects = await db.selectFrom('effect').select('partition_key').execute();
  expect(effects.map((row) => row.partition_key).sort()).toEqual(['ok-1', 'ok-2', 'ok-3']);
  const rows = await sql<{ key: string; processed_at: Date | null; last_error: string | null }>`
    SELECT partition_key AS key, processed_at, last_error FROM inbox_event ORDER BY seq
  `.execute(db);
  const processedAt = new Set(
    rows.rows.flatMap((row) => (row.processed_at ? [row.processed_at.getTime()] : [])),
  );
  // now() is the transaction's start: one value for the three rows means one commit.
  expect(processedAt.size).toBe(1);
  const errors = Object.fromEntries(rows.rows.map((row) => [row.key, row.last_error]));
  expect(errors['fails']).toContain('refused by the handler');
  expect(errors['hangs']).toContain('timed out');
  expect(errors['ok-1']).toBeNull();
});
