import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { enqueue, startRelay } from '../../src/index.ts';
import {
  kafkaClient,
  collectTopic,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  statementCountingDb,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('relay_linger');

it('a steady stream of commits goes out in batches: after a partial batch the lane lingers', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relay-linger', 1);
  const collected = await collectTopic(kafka, topic);
  const lingerMs = 100;
  const batches: { at: number; size: number }[] = [];
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    listen: { connectionString: testDb.url },
    options: {
      lanes: 1,
      lingerMs,
      // NOTIFY wakes the relay; the poll would only add claims of its own.
      pollIntervalMs: 60_000,
      hooks: {
        afterPublish: (batch) => void batches.push({ at: performance.now(), size: batch.length }),
      },
    },
  });
  const commit = (n: number) =>
    testDb.db.transaction().execute((trx) =>
      enqueue(trx, {
        eventType: 'Tick',
        aggregateType: 'stream',
        aggregateId: 's',
        topic,
        partitionKey: 's',
        payload: { n },
      }),
    );
  try {
    // Warm-up: the producer connected and the first batch out before the stream starts.
    await commit(0);
    await pollUntil(() => batches.length === 1, {
      timeoutMs: 30_000,
      description: 'the warm-up event published',
    });
    batches.length = 0;
    // Commits back to back, one event each: every commit NOTIFYs the relay.
    const commits = 500;
    for (let n = 1; n <= commits; n++) await commit(n);
    await pollUntil(
      async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
      { timeoutMs: 30_000, description: 'every event published' },
    );
    const messages = await pollUntil(
      () => collected.messages.length > commits && collected.messages,
      { timeoutMs: 20_000, description: 'every event on the topic' },
    );
    expect(messages.map((m) => (JSON.parse(m.value) as { n: number }).n)).toEqual(
      Array.from({ length: commits + 1 }, (_, n) => n),
    );
    // Without the linger each commit's NOTIFY would start a claim of its own: hundreds of
    // batches of one or two events, a few milliseconds apart.
    expect(batches.reduce((sum, b) => sum + b.size, 0)).toBe(commits);
    for (let i = 1; i < batches.length; i++) {
      const gap = (batches[i]?.at ?? 0) - (batches[i - 1]?.at ?? 0);
      // Timers may fire up to a millisecond early.
      expect(gap, `gap before batch ${i} of ${batches.length}`).toBeGreaterThanOrEqual(
        lingerMs - 1,
      );
    }
    expect(batches.length).toBeLessThan(commits / 5);
  } finally {
    await relay.stop();
    await collected.stop();
  }
});

it('a partial batch is not followed by an empty claim: the lane waits for the next NOTIFY', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relay-no-empty-claim', 1);
  const { db: counted, sent } = statementCountingDb(testDb);
  const claims = (): number => sent.filter((s) => s.text.includes('WITH candidate AS')).length;
  const relay = await startRelay({
    db: counted,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    listen: { connectionString: testDb.url },
    // A short linger, so a claim after it would come long before the next commit; no poll.
    options: { lanes: 1, lingerMs: 1, pollIntervalMs: 600_000 },
  });
  const commit = (n: number) =>
    testDb.db.transaction().execute((trx) =>
      enqueue(trx, {
        eventType: 'Tick',
        aggregateType: 'stream',
        aggregateId: 'one-at-a-time',
        topic,
        partitionKey: `k${n}`,
        payload: { n },
      }),
    );
  try {
    await pollUntil(() => claims() >= 1, { timeoutMs: 10_000, description: 'the first claim' });
    const before = claims();
    const events = 20;
    for (let n = 1; n <= events; n++) {
      await commit(n);
      await pollUntil(
        async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
        { timeoutMs: 10_000, description: `event ${n} published` },
      );
    }
    // Before: each batch of one was followed, after the linger, by a claim that found nothing.
    expect(claims() - before).toBeLessThanOrEqual(events + 2);
  } finally {
    await relay.stop();
    await counted.destroy();
  }
});

it('an idle poll costs one statement, and a row committed without NOTIFY still goes out at the poll', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relay-idle-poll', 1);
  const collected = await collectTopic(kafka, topic);
  const { db: counted, sent } = statementCountingDb(testDb);
  const claims = (): number => sent.filter((s) => s.text.includes('WITH candidate AS')).length;
  const pollIntervalMs = 50;
  const relay = await startRelay({
    db: counted,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    listen: { connectionString: testDb.url },
    options: { lanes: 1, pollIntervalMs },
  });
  try {
    await pollUntil(() => claims() >= 1, { timeoutMs: 10_000, description: 'the first claim' });
    const idleFrom = sent.length;
    const claimsFrom = claims();
    // About twenty polls with nothing to publish.
    await pollUntil(() => sent.length - idleFrom >= 20, {
      timeoutMs: 20_000,
      description: 'twenty idle polls',
    });
    const idle = sent.slice(idleFrom);
    expect(claims() - claimsFrom, 'claims while idle').toBe(0);
    expect(idle.every((s) => !/^\s*(BEGIN|COMMIT)/i.test(s.text))).toBe(true);
    // A writer that does not NOTIFY (the processor's handlers may not): the poll finds its row.
    await testDb.db.transaction().execute((trx) =>
      enqueue(
        trx,
        {
          eventType: 'Tick',
          aggregateType: 'stream',
          aggregateId: 'quiet',
          topic,
          partitionKey: 'quiet',
          payload: { n: 1 },
        },
        { notify: false },
      ),
    );
    await pollUntil(() => collected.messages.length === 1, {
      timeoutMs: 10_000,
      description: 'the quietly committed row published by the poll',
    });
  } finally {
    await relay.stop();
    await counted.destroy();
    await collected.stop();
  }
});
