import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { startInboxProcessor, type CallingInboxHandler, type InboxEvent } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_calling');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

const fastRetries = {
  pollIntervalMs: 50,
  statementTimeoutMs: 5000,
  retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
};

/** Writes what `call` answered; the effect and the processed mark commit together. */
const applyAnswer: CallingInboxHandler<EffectDb, string>['apply'] = (trx, event, answer) =>
  recordEffect(trx, event, { answer });

/** What the database shows while `call` waits: no open transaction, no lock on the row. */
async function duringCall(eventId: string) {
  const open = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND state LIKE 'idle in transaction%'`.execute(db);
  // NOWAIT fails at once if any transaction holds the row.
  const locked = await db
    .transaction()
    .execute((trx) =>
      sql`SELECT 1 FROM inbox_event WHERE event_id = ${eventId} FOR UPDATE NOWAIT`.execute(trx),
    )
    .then(
      () => false,
      () => true,
    );
  return { openTransactions: open.rows[0]?.n ?? -1, rowLocked: locked };
}

it('call runs with no transaction and no row lock held; apply commits its answer with the processed mark', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [eventId] = await seedInbox(testDb.db, [{ key: 'a', eventType: 'Pay', payload: { n: 1 } }]);
  const seen: Awaited<ReturnType<typeof duringCall>>[] = [];
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: { ...fastRetries, concurrency: 1, handlerTimeoutMs: 2000 },
    handlers: {
      Pay: {
        async call(event) {
          seen.push(await duringCall(event.eventId));
          return `charged ${event.eventId}`;
        },
        apply: applyAnswer,
      } satisfies CallingInboxHandler<EffectDb, string>,
    },
  });
  try {
    await pollUntil(async () => ((await count(testDb.db, 'effect')) === 1 ? true : undefined), {
      timeoutMs: 10_000,
      description: 'the effect',
    });
  } finally {
    await processor.stop();
  }
  expect(seen).toEqual([{ openTransactions: 0, rowLocked: false }]);
  const effect = await db.selectFrom('effect').selectAll().executeTakeFirstOrThrow();
  expect(effect.answer).toBe(`charged ${eventId}`);
  const row = await db
    .selectFrom('inbox_event')
    .select(['processed', 'attempts'])
    .where('event_id', '=', eventId ?? '')
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ processed: true, attempts: 1 });
});

it('a call that fails is retried, a call that outlives the timeout is aborted, and both go dead after maxAttempts; other keys flow in order', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const [flakyId, hangId] = await seedInbox(testDb.db, [
    { key: 'flaky', eventType: 'Flaky', payload: { n: 1 } },
    { key: 'hang', eventType: 'Hangs', payload: { n: 1 } },
    ...Array.from({ length: 24 }, (_, n) => ({
      key: `ok-${n % 3}`,
      eventType: 'Ok',
      payload: { n },
    })),
  ]);
  const calls = new Map<string, number>();
  const aborted: boolean[] = [];
  const counted = (event: InboxEvent): number => {
    const n = (calls.get(event.eventId) ?? 0) + 1;
    calls.set(event.eventId, n);
    return n;
  };
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: { ...fastRetries, concurrency: 4, maxAttempts: 3, handlerTimeoutMs: 300 },
    handlers: {
      Flaky: {
        async call(event) {
          if (counted(event) < 2) throw new Error('provider unavailable');
          return 'second time lucky';
        },
        apply: applyAnswer,
      } satisfies CallingInboxHandler<EffectDb, string>,
      Hangs: {
        call: (event, signal) =>
          new Promise<string>((resolve) => {
            counted(event);
            signal.addEventListener('abort', () => aborted.push(true));
            setTimeout(() => resolve('too late'), 2000);
          }),
        apply: applyAnswer,
      } satisfies CallingInboxHandler<EffectDb, string>,
      Ok: {
        // Calls of varied length: a later event of a key must still be applied after an earlier one.
        call: async (event) => {
          const { n } = event.payload as { n: number };
          await new Promise((resolve) => setTimeout(resolve, (n * 7) % 30));
          return 'ok';
        },
        apply: applyAnswer,
      } satisfies CallingInboxHandler<EffectDb, string>,
    },
  });
  try {
    await pollUntil(
      async () => {
        const hang = await db
          .selectFrom('inbox_event')
          .select('dead_at')
          .where('event_id', '=', hangId ?? '')
          .executeTakeFirstOrThrow();
        return hang.dead_at !== null && (await count(testDb.db, 'effect')) === 25
          ? true
          : undefined;
      },
      { timeoutMs: 20_000, description: 'the hanging call dead, every other event applied' },
    );
  } finally {
    await processor.stop();
  }
  expect(calls.get(flakyId ?? '')).toBe(2);
  expect(calls.get(hangId ?? '')).toBe(3);
  expect(aborted).toHaveLength(3);
  const effects = await db.selectFrom('effect').selectAll().orderBy('seq').execute();
  // The hanging call's late answer was never applied; the flaky one once.
  expect(effects.filter((e) => e.event_id === hangId)).toEqual([]);
  expect(effects.filter((e) => e.event_id === flakyId).map((e) => e.answer)).toEqual([
    'second time lucky',
  ]);
  for (const key of ['ok-0', 'ok-1', 'ok-2']) {
    const ns = effects.filter((e) => e.partition_key === key).map((e) => e.n);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
    expect(ns).toHaveLength(8);
  }
});
