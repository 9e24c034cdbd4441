import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import type { RelayBatchEvent } from '../../src/testing.ts';
import { claimBatch } from '../../src/relay/claim-batch.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  count,
  createKafka,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';
import { createConfiguredTopic, messagesOnTopic } from '../support/topics.ts';

const testDb = useTestDb('batch_bytes');

const PAYLOAD_BYTES = 1000;
const event = (topic: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: 'hot',
  topic,
  partitionKey: 'hot',
  payload: { n, blob: 'x'.repeat(PAYLOAD_BYTES) },
});

it('batches stay under maxBatchBytes, so a partition whose limit is lower than a full batch still takes every event once, in order', async () => {
  const kafka = createKafka();
  // One key, so every batch is one record batch of one partition; 40 such events are about
  // twice what the topic takes in one record batch.
  const topic = await createConfiguredTopic(kafka, 'capped', 1, { 'max.message.bytes': '20000' });
  const { eventIds } = await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      Array.from({ length: 40 }, (_, n) => event(topic, n)),
    ),
  );

  const batches: (readonly RelayBatchEvent[])[] = [];
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      pollIntervalMs: 50,
      maxBatchBytes: 15_000,
      hooks: { afterPublish: (batch) => void batches.push(batch) },
    },
  });
  try {
    await pollUntil(
      async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
      { timeoutMs: 30_000, description: 'every event published' },
    );
  } finally {
    await relay.stop();
  }
  expect(await count(testDb.db, 'outbox_event WHERE failed_at IS NOT NULL')).toBe(0);
  // Each record is more than PAYLOAD_BYTES, so a batch under the cap has fewer than this many.
  expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThan(15_000 / PAYLOAD_BYTES);
  expect(await messagesOnTopic(kafka, topic)).toBe(40);
  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => collected.messages.length >= 40, {
    timeoutMs: 20_000,
    description: 'every message read back',
  });
  await collected.stop();
  expect(checkOrder(collected.messages, new Map([['hot', eventIds]]))).toEqual({
    duplicates: 0,
    outOfOrder: [],
    missing: 0,
  });
});

it('the claim stops adding rows before the cap, but always takes the first one', async () => {
  await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      Array.from({ length: 20 }, (_, n) => event('t', n)),
    ),
  );
  const claim = (maxBatchBytes: number) =>
    testDb.db
      .transaction()
      .execute((trx) => claimBatch(trx, { ...DEFAULT_RELAY_OPTIONS, maxBatchBytes }));

  const capped = await claim(5 * PAYLOAD_BYTES);
  expect(capped.events.length).toBeGreaterThanOrEqual(1);
  expect(capped.events.length).toBeLessThan(5);
  expect(capped.full).toBe(true);

  const tiny = await claim(10);
  expect(tiny.events).toHaveLength(1);
  expect(tiny.full).toBe(true);

  const roomy = await claim(1_000_000);
  expect(roomy.events).toHaveLength(20);
  expect(roomy.full).toBe(false);
});
