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
  stack,
  useTestDb,
} from '../support/harness.ts';
import { silenceableBrokers } from '../support/silent-broker.ts';
import { messagesOnTopic } from '../support/topics.ts';

const testDb = useTestDb('relay_unanswered');

const events = (topic: string, from: number, n: number): OutboxEventInput[] =>
  Array.from({ length: n }, (_, i) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: `o${(from + i) % 5}`,
    topic,
    partitionKey: `o${(from + i) % 5}`,
    payload: { n: from + i },
  }));

it('marks nothing published while Kafka answers nothing, and publishes every row once it answers again', async () => {
  const admin = createKafka();
  const topic = await createTopic(admin, 'relay-unanswered', 1);
  const brokers = stack().kafkaBrokers;
  const kafka = new Kafka({
    clientId: 'relay-unanswered',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 2000,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 500 },
  });
  const logger = recordingLogger();
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka, brokers, { timeoutMs: 2000 }),
    logger,
    options: {
      pollIntervalMs: 50,
      sendTimeoutMs: 1500,
      backoff: { initialMs: 100, maxMs: 500, multiplier: 2 },
    },
  });
  // Patches net.Socket itself, so the connections already open are covered; installed here, it
  // is always put back by the finally below.
  const sockets = silenceableBrokers(brokers);
  try {
    await testDb.db.transaction().execute((trx) => enqueueMany(trx, events(topic, 0, 20)));
    await pollUntil(
      async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
      {
        timeoutMs: 30_000,
        description: 'the first rows to be published',
      },
    );
    // And on the topic: a relay that marked its rows before Kafka answered (the mutation
    // published-before-ack) must not get to silence its first send as if it were the second.
    await pollUntil(async () => (await messagesOnTopic(admin, topic)) >= 20, {
      timeoutMs: 30_000,
      description: 'the first rows to be on the topic',
    });

    const linesBefore = logger.lines.length;
    sockets.silence(true);
    // Written while Kafka answers nothing: the relay claims them with its connected producer.
    await testDb.db.transaction().execute((trx) => enqueueMany(trx, events(topic, 20, 20)));
    await pollUntil(
      () =>
        logger.lines
          .slice(linesBefore)
          .some((l) => l.level === 'warn' && l.msg.includes('failing')),
      {
        timeoutMs: 30_000,
        description: 'a send that nobody answered to fail',
      },
    );
    // No acknowledgement came, so no row may be marked published.
    expect(await count(testDb.db, 'outbox_event WHERE published_at IS NULL')).toBe(20);

    sockets.silence(false);
    await pollUntil(
      async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
      {
        timeoutMs: 60_000,
        description: 'the rows to be published once Kafka answers again',
      },
    );
  } finally {
    sockets.silence(false);
    await relay.stop();
    sockets.restore();
  }
});
