import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { enqueue, enqueueMany, startRelay } from '../../src/index.ts';
import { replayOutbox } from '../../src/ops.ts';
import {
  kafkaClient,
  collectTopic,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('replay_order');

it('a replay under a running relay queues all of a key at once: a newer event never lands between its replayed ones', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'replay-order', 1);
  const step = (key: string, n: number) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: key,
    topic,
    partitionKey: key,
    payload: { n },
  });
  // k1, x1, k2: published long ago (the originals are not on this topic; only the replay is).
  // k3: written since, not yet published.
  const [k1 = '', , k2 = ''] = (
    await testDb.db
      .transaction()
      .execute((trx) => enqueueMany(trx, [step('k', 1), step('x', 1), step('k', 2)]))
  ).eventIds;
  await sql`UPDATE outbox_event SET published_at = now()`.execute(testDb.db);
  const { eventId: k3 } = await testDb.db
    .transaction()
    .execute((trx) => enqueue(trx, step('k', 3)));

  // Hold k2's row, so the replay stops on it midway; whatever it queued before is committed
  // by then if it works in several transactions. (Both transactions start after k3 committed,
  // so the commit-order fence does not hold k3 back for them.)
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const holder = testDb.db.transaction().execute(async (trx) => {
    await sql`SELECT 1 FROM outbox_event WHERE event_id = ${k2} FOR UPDATE`.execute(trx);
    await gate;
  });
  let relay: { stop(): Promise<void> } | undefined;
  try {
    // Small statements, as a replay of a large table would have (the option of each version).
    const small = { chunkSize: 2, keysPerStatement: 1 };
    const replay = replayOutbox(testDb.db, { topic }, small);
    await pollUntil(
      async () =>
        (await count(
          testDb.db,
          "pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )) > 0,
      { timeoutMs: 20_000, description: 'the replay waiting for the held row' },
    );

    // The relay runs while the replay is under way, and publishes k3.
    relay = await startRelay({
      db: testDb.db,
      kafka: kafkaClient(kafka),
      logger: recordingLogger(),
      options: { pollIntervalMs: 50 },
    });
    await pollUntil(
      async () =>
        (await count(
          testDb.db,
          `outbox_event WHERE event_id = '${k3}' AND published_at IS NOT NULL`,
        )) === 1,
      { timeoutMs: 20_000, description: 'the new event published' },
    );
    release();
    await holder;
    const queued = await replay;
    await pollUntil(
      async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
      { timeoutMs: 20_000, description: 'the replay published' },
    );

    const collected = await collectTopic(kafka, topic);
    await pollUntil(() => collected.messages.length >= 4, {
      timeoutMs: 20_000,
      description: 'k3, k1, k2 and x1 read back',
    });
    await collected.stop();
    const ofK = collected.messages.filter((m) => m.key === 'k').map((m) => m.eventId);
    // The new event went out first (k3 k1 k2), never between the replayed ones (k1 k3 k2).
    expect(ofK).toEqual([k3, k1, k2]);
    // Only the rows published when the replay began: k1, x1, k2.
    expect(queued).toBe(3);
  } finally {
    release();
    await holder;
    await relay?.stop();
  }
});
