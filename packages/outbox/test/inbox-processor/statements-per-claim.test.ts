import { pollUntil, type SentStatement } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueue, enqueueMany, startInboxProcessor, type InboxHandler } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import {
  count,
  recordingLogger,
  seedInbox,
  statementCountingDb,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('inbox_statements');
let counted: { readonly db: Kysely<EffectDb>; readonly sent: SentStatement[] };
beforeAll(async () => {
  await createEffectTable(testDb);
  counted = statementCountingDb<EffectDb>(testDb);
});
afterAll(async () => counted.db.destroy());

const answer = (event: { eventId: string; partitionKey: string }) => ({
  eventType: 'Answered',
  aggregateType: 'test',
  aggregateId: event.partitionKey,
  topic: 'answers',
  partitionKey: event.partitionKey,
  payload: { to: event.eventId },
});

/** The statements one claim of `rows` fresh keys costs, from the claim to its commit. */
async function statementsForOneClaim(
  handler: InboxHandler<EffectDb>,
  rows: number,
): Promise<readonly SentStatement[]> {
  await sql`TRUNCATE effect, inbox_event, outbox_event`.execute(testDb.db);
  await seedInbox(
    testDb.db,
    Array.from({ length: rows }, (_, n) => ({ key: `k${n}`, eventType: 'Ok', payload: { n } })),
  );
  counted.sent.length = 0;
  const processor = startInboxProcessor<EffectDb>({
    db: counted.db,
    logger: recordingLogger(),
    // One worker, one claim of every row, no poll while the test waits.
    options: { concurrency: 1, batchSize: 64, notify: false, pollIntervalMs: 60_000 },
    handlers: { Ok: handler },
  });
  await pollUntil(async () => (await count(testDb.db, 'effect')) === rows, {
    timeoutMs: 20_000,
    description: 'every row handled',
  });
  await processor.stop();
  expect(await count(testDb.db, 'inbox_event WHERE processed')).toBe(rows);
  expect(await count(testDb.db, 'outbox_event')).toBe(rows);
  // Claims that found nothing are the idle worker's, not the cost of these rows.
  return counted.sent.filter((s) => !(s.text.includes('WITH head AS') && s.rows === 0));
}

const perEvent: InboxHandler<EffectDb> = async (trx, event) => {
  await recordEffect(trx, event);
  await enqueue(trx, answer(event), { notify: false });
};

it('the per-event handler: a claim costs five statements plus three per row (no writer announcement of its own)', async () => {
  const two = await statementsForOneClaim(perEvent, 2);
  const sixteen = await statementsForOneClaim(perEvent, 16);
  // The claim, BEGIN, the lock (which announces the writer), the mark, COMMIT; per row a
  // savepoint, the effect and the outbox row.
  expect(two).toHaveLength(5 + 3 * 2);
  expect(sixteen).toHaveLength(5 + 3 * 16);
});

const batch: InboxHandler<EffectDb> = {
  async applyBatch(trx, items) {
    await trx
      .insertInto('effect')
      .expression(
        sql`SELECT * FROM unnest(${items.map(({ event }) => event.eventId)}::uuid[],
          ${items.map(({ event }) => event.partitionKey)}::text[],
          ${items.map(({ event }) => (event.payload as { n: number }).n)}::int[])`,
      )
      .columns(['event_id', 'partition_key', 'n'])
      .execute();
    await enqueueMany(
      trx,
      items.map(({ event }) => answer(event)),
      { notify: false },
    );
  },
};

it('the batch form: a claim costs eight statements, for 2 rows as for 16', async () => {
  const two = await statementsForOneClaim(batch, 2);
  const sixteen = await statementsForOneClaim(batch, 16);
  // The claim, BEGIN, the lock, one savepoint, the effects, the outbox rows, the mark, COMMIT.
  expect(two).toHaveLength(8);
  expect(sixteen).toHaveLength(8);
});
