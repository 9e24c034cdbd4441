import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  enqueue,
  startDedupConsumer,
  startInboxProcessor,
  startInboxWriter,
  startRelay,
} from '../../src/index.ts';
import { createOutboxMetrics, type OutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  seedInbox,
  useTestDb,
} from '../support/harness.ts';

const STALL_AFTER_MS = 1500;

const testDb = useTestDb('stalls');

function stallMetrics(): { registry: Registry; metrics: OutboxMetrics } {
  const registry = new Registry();
  return {
    registry,
    metrics: createOutboxMetrics(registry, undefined, { stallAfterMs: STALL_AFTER_MS }),
  };
}

/** Waits until `outbox_worker_stalled{worker}` reads `value` on a scrape. */
async function stalledMetric(registry: Registry, worker: string, value: 0 | 1): Promise<void> {
  const line = new RegExp(`^outbox_worker_stalled\\{worker="${worker}"\\} ${value}$`, 'm');
  await pollUntil(async () => line.test(await registry.metrics()), {
    timeoutMs: 30_000,
    description: `outbox_worker_stalled{worker="${worker}"} ${value}`,
  });
}

it('an inbox writer whose batch cannot be stored is stalled, and not once it is stored', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'stall-writer', 1);
  const { registry, metrics } = stallMetrics();
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: { groupId: `payments-${topic}`, topics: [topic] },
  });
  try {
    // Another session holds the table: the writer has a batch and cannot store it.
    const locked = testDb.db.transaction().execute(async (trx) => {
      await sql`LOCK TABLE inbox_event IN ACCESS EXCLUSIVE MODE`.execute(trx);
      await produce(kafka, topic, [eventMessage('order-1', 'OrderCreated', {})]);
      await stalledMetric(registry, 'inbox-writer', 1);
      const writerHealth = metrics.stalls.workers().find((w) => w.worker === 'inbox-writer');
      expect(writerHealth?.reason).toMatch(new RegExp(`without progress \\(${topic}/0\\)`));
    });
    await locked;
    await stalledMetric(registry, 'inbox-writer', 0);
  } finally {
    await writer.stop();
  }
});

it('a relay that cannot reach Kafka while rows wait is stalled, with the reason', async () => {
  const { registry, metrics } = stallMetrics();
  await testDb.db.transaction().execute((trx) =>
    enqueue(trx, {
      eventType: 'OrderCreated',
      aggregateType: 'order',
      aggregateId: 'o-1',
      topic: 'stall.events',
      partitionKey: 'o-1',
      payload: {},
    }),
  );
  // Nothing listens on port 1: every connection is refused.
  const unreachable = new Kafka({
    brokers: ['127.0.0.1:1'],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(unreachable),
    logger: recordingLogger(),
    metrics,
    options: { pollIntervalMs: 100, backoff: { initialMs: 50, maxMs: 200, multiplier: 2 } },
  });
  try {
    await stalledMetric(registry, 'outbox-relay', 1);
    const relayHealth = metrics.stalls.workers().find((w) => w.worker === 'outbox-relay');
    expect(relayHealth?.reason).toMatch(/without progress; last error: KafkaJS/);
  } finally {
    await relay.stop();
    await sql`TRUNCATE outbox_event`.execute(testDb.db);
  }
});

it('an inbox processor whose handler is slow is stalled while it runs', async () => {
  const { registry, metrics } = stallMetrics();
  await seedInbox(testDb.db, [{ key: 'k', eventType: 'Slow' }]);
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const processor = startInboxProcessor({
    db: testDb.db,
    logger: recordingLogger(),
    metrics,
    options: { pollIntervalMs: 100, handlerTimeoutMs: 20_000 },
    handlers: { Slow: () => released },
  });
  try {
    await stalledMetric(registry, 'inbox-processor', 1);
    release();
    await stalledMetric(registry, 'inbox-processor', 0);
  } finally {
    release();
    await processor.stop();
  }
});

it('a dedup consumer whose handler keeps failing is stalled, with the error', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'stall-dedup', 1);
  const { registry, metrics } = stallMetrics();
  let failing = true;
  await produce(kafka, topic, [eventMessage('order-1', 'PaymentSucceeded', {})]);
  const consumer = await startDedupConsumer({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: {
      groupId: `orders-${topic}`,
      topics: [topic],
      consumerName: 'stalls',
      maxAttempts: 1000,
      backoff: { initialMs: 50, maxMs: 200 },
    },
    handle: async () => {
      if (failing) throw new Error('payment service says no');
    },
  });
  try {
    await stalledMetric(registry, 'dedup-consumer', 1);
    const health = metrics.stalls.workers().find((w) => w.worker === 'dedup-consumer');
    expect(health?.reason).toContain('last error: Error: payment service says no');
    failing = false;
    await stalledMetric(registry, 'dedup-consumer', 0);
  } finally {
    await consumer.stop();
  }
});

it('a scrape answers with the last values while the backlog query waits behind a lock', async () => {
  const registry = new Registry();
  createOutboxMetrics(registry, testDb.db, { backlogCacheMs: 0 });
  await seedInbox(testDb.db, [{ key: 'k', eventType: 'X' }]);
  expect(await registry.metrics()).toMatch(/^inbox_backlog_events [1-9]\d*$/m);
  await testDb.db.transaction().execute(async (trx) => {
    await sql`LOCK TABLE inbox_event IN ACCESS EXCLUSIVE MODE`.execute(trx);
    expect(await registry.metrics()).toMatch(/^inbox_backlog_events [1-9]\d*$/m);
  });
});

it('scrapes within the cache window answer from one backlog query', async () => {
  const cached = new Registry();
  createOutboxMetrics(cached, testDb.db, { backlogCacheMs: 60_000 });
  const fresh = new Registry();
  createOutboxMetrics(fresh, testDb.db, { backlogCacheMs: 0 });
  const backlog = async (registry: Registry): Promise<number> =>
    Number(/^inbox_backlog_events (\d+)$/m.exec(await registry.metrics())?.[1]);
  const before = await backlog(cached);
  expect(await backlog(fresh)).toBe(before);
  await seedInbox(testDb.db, [{ key: 'cache', eventType: 'X' }]);
  expect(await backlog(fresh)).toBe(before + 1);
  expect(await backlog(cached)).toBe(before);
});
