import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely, type Transaction } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { startInboxProcessor, type InboxBatchItem, type InboxEvent } from '../../src/index.ts';
import { createEffectTable, type EffectDb } from '../support/effect-table.ts';
import { count, recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_batch_handler');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

/** Every item's effect with one INSERT, as a batch handler writes them. */
async function recordEffects(
  trx: Transaction<EffectDb>,
  items: readonly InboxBatchItem<unknown>[],
): Promise<void> {
  await trx
    .insertInto('effect')
    .expression(
      sql`SELECT * FROM unnest(${items.map(({ event }) => event.eventId)}::uuid[],
        ${items.map(({ event }) => event.partitionKey)}::text[],
        ${items.map(({ event }) => (event.payload as { n: number }).n)}::int[],
        ${items.map(({ result }) => (typeof result === 'string' ? result : null))}::text[])`,
    )
    .columns(['event_id', 'partition_key', 'n', 'answer'])
    .execute();
}

it('a batch with one failing row: the others are processed, the bad one spends exactly one attempt', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  const ids = await seedInbox(
    testDb.db,
    Array.from({ length: 6 }, (_, n) => ({ key: `k${n}`, eventType: 'Batched', payload: { n } })),
  );
  const poisonId = ids[3] ?? '';
  const batchSizes: number[] = [];
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: {
      concurrency: 1,
      batchSize: 64,
      notify: false,
      pollIntervalMs: 50,
      maxAttempts: 5,
      // No second attempt while the test looks.
      retryBackoff: { initialMs: 600_000, maxMs: 600_000, multiplier: 2 },
    },
    handlers: {
      Batched: {
        async applyBatch(trx, items) {
          batchSizes.push(items.length);
          // Writes first, then fails: the batch's writes must not stay.
          await recordEffects(trx, items);
          if (items.some(({ event }) => event.eventId === poisonId)) {
            throw new Error('cannot apply row 3');
          }
        },
      },
    },
  });
  // Every row has an outcome: processed, or failed with its error.
  await pollUntil(
    async () =>
      (await count(testDb.db, 'inbox_event WHERE NOT processed AND last_error IS NULL')) === 0,
    { timeoutMs: 20_000, description: 'every row processed or failed' },
  );
  await processor.stop();

  // The claim's six in one batch, then each alone.
  expect(batchSizes).toEqual([6, 1, 1, 1, 1, 1, 1]);
  const poison = await db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', poisonId)
    .executeTakeFirstOrThrow();
  expect(poison).toMatchObject({ processed: false, attempts: 1, dead_at: null });
  expect(poison.last_error).toContain('cannot apply row 3');
  const effects = await db.selectFrom('effect').select('n').orderBy('n').execute();
  expect(effects.map((e) => e.n)).toEqual([0, 1, 2, 4, 5]);
  expect(await count(testDb.db, 'inbox_event WHERE processed AND attempts = 1')).toBe(5);
});

it("a batch handler's call runs per event with no transaction; applyBatch gets each result", async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(db);
  await seedInbox(
    testDb.db,
    Array.from({ length: 4 }, (_, n) => ({ key: `c${n}`, eventType: 'Called', payload: { n } })),
  );
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    options: { concurrency: 1, batchSize: 64, notify: false, pollIntervalMs: 50 },
    handlers: {
      Called: {
        call: async (event: InboxEvent) => `answer ${(event.payload as { n: number }).n}`,
        applyBatch: recordEffects,
      },
    },
  });
  await pollUntil(async () => (await count(testDb.db, 'inbox_event WHERE processed')) === 4, {
    timeoutMs: 20_000,
    description: 'every row processed',
  });
  await processor.stop();
  const effects = await db.selectFrom('effect').select(['n', 'answer']).orderBy('n').execute();
  expect(effects).toEqual([0, 1, 2, 3].map((n) => ({ n, answer: `answer ${n}` })));
});
