import { afterEach, beforeEach, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { createOutboxNotifier, enqueue, startInboxProcessor } from '../../src/index.ts';
import { OUTBOX_CHANNEL } from '../../src/ops.ts';
import { CommitNotifier } from '../../src/enqueue/commit-notifier.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import { recordingLogger, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('commit_notifier');
const channel = 'commit_notifier_test';
const sentinel = 'commit_notifier_sentinel';

let listener: pg.Client;
let received: string[];
beforeEach(async () => {
  received = [];
  listener = new pg.Client({ connectionString: testDb.url });
  await listener.connect();
  listener.on('notification', (message) => received.push(message.channel));
  await listener.query(`LISTEN ${channel}; LISTEN ${sentinel}; LISTEN ${OUTBOX_CHANNEL}`);
});
afterEach(async () => {
  await listener.end();
});

/** Notifications of one session arrive in commit order: once the sentinel is in, all are. */
async function receivedBefore(): Promise<string[]> {
  await sql`SELECT pg_notify(${sentinel}, '')`.execute(testDb.db);
  await pollUntil(() => received.includes(sentinel), {
    timeoutMs: 10_000,
    description: 'the sentinel NOTIFY',
  });
  return received.filter((name) => name !== sentinel);
}

it('sends one NOTIFY per call when calls do not overlap, and folds overlapping calls into one more', async () => {
  const notifier = new CommitNotifier(testDb.db, channel, recordingLogger());
  notifier.notify();
  await notifier.idle();
  expect(await receivedBefore()).toEqual([channel]);

  received = [];
  // The first call sends; the 49 made while it is in flight make exactly one more, after it.
  for (let i = 0; i < 50; i++) notifier.notify();
  await notifier.idle();
  expect(await receivedBefore()).toEqual([channel, channel]);
});

it('logs a NOTIFY that fails and keeps working', async () => {
  const unreachable = new Kysely<unknown>({
    dialect: new PostgresDialect({
      pool: new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' }),
    }),
  });
  const logger = recordingLogger();
  const notifier = new CommitNotifier(unreachable, channel, logger);
  try {
    notifier.notify();
    await notifier.idle();
    notifier.notify();
    await notifier.idle();
  } finally {
    await unreachable.destroy();
  }
  expect(logger.lines.filter((line) => line.level === 'warn')).toHaveLength(2);
  expect(logger.lines[0]?.msg).toContain(`NOTIFY ${channel} failed`);
});

it("a handler's enqueue without NOTIFY wakes the relays after the row's commit, through the processor", async () => {
  const db = await createEffectTable(testDb);
  await seedInbox(testDb.db, [{ key: 'k', eventType: 'Ok', payload: { n: 1 } }]);
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger: recordingLogger(),
    relayNotifier: createOutboxNotifier(db, recordingLogger()),
    options: { pollIntervalMs: 50 },
    handlers: {
      Ok: async (trx, event) => {
        await recordEffect(trx, event);
        await enqueue(
          trx,
          {
            eventType: 'Answered',
            aggregateType: 'test',
            aggregateId: event.aggregateId,
            topic: 'answers',
            partitionKey: event.partitionKey,
            payload: { n: 1 },
          },
          { notify: false },
        );
      },
    },
  });
  try {
    await pollUntil(() => received.includes(OUTBOX_CHANNEL), {
      timeoutMs: 10_000,
      description: 'the relays woken',
    });
  } finally {
    await processor.stop();
  }
  const outbox = await sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_event`.execute(db);
  expect(outbox.rows[0]?.n).toBe(1);
});
