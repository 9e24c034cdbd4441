import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { enqueue, startInboxProcessor } from '../../src/index.ts';
import { heldByFence } from '../../src/relay/commit-order-fence.ts';
import { recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('inbox_writer_fence');

const event = (key: string) => ({
  eventType: 'Answered',
  aggregateType: 'test',
  aggregateId: key,
  topic: 'answers',
  partitionKey: key,
  payload: {},
});

/** Committed outbox rows the relays' commit-order fence holds back now. */
async function heldRows(): Promise<number> {
  const result = await sql<{ n: string }>`
    SELECT count(*) AS n FROM outbox_event o WHERE ${heldByFence('o')}`.execute(testDb.db);
  return Number(result.rows[0]?.n ?? 0);
}

it("a processor's write transaction is fenced as a writer, though its handlers' enqueues announce nothing", async () => {
  await seedInbox(testDb.db, [{ key: 'k', eventType: 'Answer' }]);
  let entered = false;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const processor = startInboxProcessor({
    db: testDb.db,
    logger: recordingLogger(),
    options: { concurrency: 1, notify: false, pollIntervalMs: 50 },
    handlers: {
      Answer: async (trx) => {
        // Holds its transaction open before it enqueues: the fence must already wait for it,
        // since its outbox id will be drawn after the rows other writers commit meanwhile.
        entered = true;
        await released;
        await enqueue(trx, event('k'), { notify: false });
      },
    },
  });
  try {
    await pollUntil(async () => entered, { timeoutMs: 20_000, description: 'the handler running' });
    // A writer that starts and commits while the processor's transaction is open.
    await testDb.db.transaction().execute((trx) => enqueue(trx, event('other'), { notify: false }));
    expect(await heldRows()).toBe(1);
  } finally {
    release();
  }
  await pollUntil(async () => (await heldRows()) === 0, {
    timeoutMs: 20_000,
    description: "the fence released once the processor's transaction committed",
  });
  await processor.stop();
  const rows = await testDb.db
    .selectFrom('outbox_event')
    .select('partition_key')
    .orderBy('id')
    .execute();
  // The processor's row drew its id after the other writer's, and was held until it could go.
  expect(rows.map((row) => row.partition_key)).toEqual(['other', 'k']);
});
