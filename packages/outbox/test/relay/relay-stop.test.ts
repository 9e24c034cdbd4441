import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import {
  kafkaClient,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('relay_stop');

const events = (topic: string, n: number): OutboxEventInput[] =>
  Array.from({ length: n }, (_, i) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: `o${i % 3}`,
    topic,
    partitionKey: `o${i % 3}`,
    payload: { i },
  }));

it('stop() with Kafka unreachable returns promptly and marks nothing published', async () => {
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, events('nowhere', 10)));
  // A port nobody listens on: Kafka "down" without disturbing the shared broker.
  const unreachable = new Kafka({
    brokers: ['127.0.0.1:1'],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
  const logger = recordingLogger();
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(unreachable, ['127.0.0.1:1']),
    logger,
    options: { pollIntervalMs: 50 },
  });
  await pollUntil(() => logger.lines.some((l) => l.level === 'warn' && l.msg.includes('failing')), {
    timeoutMs: 20_000,
    description: 'the relay to report Kafka unreachable',
  });
  await relay.stop();
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NOT NULL')).toBe(0);
  await testDb.db.deleteFrom('outbox_event').execute();
});

it('stop() during an acknowledged batch lets it commit: no acked row stays unpublished, none unacked is marked', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relay-stop', 1);
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, events(topic, 30)));
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let inHook: (size: number) => void = () => undefined;
  const hooked = new Promise<number>((resolve) => (inHook = resolve));
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      batchSize: 10,
      pollIntervalMs: 50,
      hooks: {
        afterPublish: async (batch) => {
          inHook(batch.length);
          await gate;
        },
      },
    },
  });
  expect(await hooked).toBe(10);
  const stopped = relay.stop();
  release();
  await stopped;
  // The batch in flight committed; the loop ended before claiming the next one.
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NOT NULL')).toBe(10);
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NULL')).toBe(20);
});
