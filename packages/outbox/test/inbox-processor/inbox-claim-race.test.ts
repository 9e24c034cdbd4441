import { Registry } from 'prom-client';
import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { startInboxProcessor, type CallingInboxHandler } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_claim_race');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

// A claim statement that read a row before another worker's claim of it committed locks the
// row for a moment while rechecking it. An attempt that skipped that lock would be dropped and
// its row would wait out the whole lease (20 s by default): 7 to 9 rows in 2,000 did, here.
it('many workers racing for the same heads handle every row in its first attempt', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const rows = 2000;
  await seedInbox(
    testDb.db,
    Array.from({ length: rows }, (_, n) => ({ key: `k-${n}`, eventType: 'Ok', payload: { n } })),
  );
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    // A lease far above the claim-to-lock gap, so only a dropped attempt makes a second one.
    options: {
      concurrency: 16,
      pollIntervalMs: 50,
      handlerTimeoutMs: 10_000,
      statementTimeoutMs: 15_000,
    },
    handlers: { Ok: recordEffect },
  });
  try {
    await pollUntil(async () => (await count(testDb.db, 'effect')) === rows, {
      timeoutMs: 60_000,
      description: 'every row handled',
    });
  } finally {
    await processor.stop();
  }
  expect(await count(testDb.db, 'inbox_event WHERE attempts > 1')).toBe(0);
});

const callingRecord: CallingInboxHandler<EffectDb, string> = {
  call: () => Promise.resolve('ok'),
  apply: (trx, event) => recordEffect(trx, event),
};

it('an attempt whose row was claimed again meanwhile is dropped and counted; the next attempt handles it once', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [eventId = ''] = await seedInbox(testDb.db, [
    { key: 'late', eventType: 'Ok', payload: { n: 1 } },
  ]);
  const metrics = createOutboxMetrics(new Registry());
  const logger = recordingLogger();
  let overtaken = false;
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger,
    metrics,
    options: { pollIntervalMs: 50, handlerTimeoutMs: 300, statementTimeoutMs: 5000 },
    // As another processor would after this attempt's lease ended: it counts an attempt. The
    // hook runs before `call`, outside the attempt's transaction.
    hooks: {
      beforeHandler: async () => {
        if (overtaken) return;
        overtaken = true;
        await sql`UPDATE inbox_event SET attempts = attempts + 1 WHERE event_id = ${eventId}`.execute(
          db,
        );
      },
    },
    handlers: { Ok: callingRecord },
  });
  try {
    await pollUntil(async () => (await count(testDb.db, 'inbox_event WHERE processed')) === 1, {
      timeoutMs: 30_000,
      description: 'the row handled by its next attempt',
    });
  } finally {
    await processor.stop();
  }
  expect((await metrics.inboxAttemptsLostTotal.get()).values[0]?.value).toBe(1);
  expect(await count(testDb.db, 'effect')).toBe(1);
  expect(logger.lines.some((r) => r.msg.includes('this attempt is dropped'))).toBe(true);
});
