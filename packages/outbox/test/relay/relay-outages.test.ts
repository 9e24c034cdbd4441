import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Registry } from 'prom-client';
import {
  enqueueMany,
  startInboxWriter,
  startRelay,
  type OutboxEventInput,
} from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('relay_outage');

const KEYS = 8;
const eventsFor = (topic: string, from: number, count: number): OutboxEventInput[] =>
  Array.from({ length: count }, (_, j) => {
    const i = from + j;
    return {
      eventType: 'Step',
      aggregateType: 'order',
      aggregateId: `order-${i % KEYS}`,
      topic,
      partitionKey: `order-${i % KEYS}`,
      payload: { i, pad: 'x'.repeat(200) },
    };
  });

it('Kafka SIGKILLed mid-stream, then PostgreSQL restarted: relay publishes all in order, inbox writer stores all once', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'outage', 2);
  const logger = recordingLogger();
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, testDb.db);
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger,
    metrics,
    listen: { connectionString: testDb.url },
    options: {
      batchSize: 50,
      pollIntervalMs: 60_000, // wake-ups must come from NOTIFY (or the retry loop)
      sendTimeoutMs: 3000,
      backoff: { initialMs: 100, maxMs: 1000, multiplier: 2 },
    },
  });
  // The same events flow on into an inbox (the critical-consumer side) through both outages.
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: { groupId: `inbox-${topic}`, topics: [topic], sessionTimeoutMs: 10_000 },
  });
  const written: string[][] = [];
  const write = async (from: number, count: number): Promise<void> => {
    for (let start = from; start < from + count; start += 50) {
      const batch = eventsFor(topic, start, 50);
      const { eventIds } = await testDb.db.transaction().execute((trx) => enqueueMany(trx, batch));
      written.push(eventIds);
    }
  };
  const published = async (): Promise<number> =>
    Number(
      (
        await testDb.db
          .selectFrom('outbox_event')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('published_at', 'is not', null)
          .executeTakeFirstOrThrow()
      ).n,
    );

  // Kill Kafka while batches are flowing.
  const writing = write(0, 2000);
  await pollUntil(async () => (await published()) >= 300, {
    timeoutMs: 30_000,
    description: 'the relay to be publishing',
  });
  await stack().kill('kafka');
  await writing;
  // The service keeps accepting writes while Kafka is down; the outbox accumulates.
  await write(2000, 500);
  await pollUntil(() => logger.lines.some((l) => l.level === 'warn' && l.msg.includes('failing')), {
    timeoutMs: 20_000,
    description: 'the relay to notice Kafka is down',
  });
  const stuck = await published();
  expect(stuck).toBeLessThan(2500);
  await stack().start('kafka');
  await pollUntil(async () => (await published()) === 2500, {
    timeoutMs: 60_000,
    description: 'the backlog to drain after Kafka is back',
  });

  // PostgreSQL restarts: pool and LISTEN connections break, and come back.
  await stack().restart('postgres');
  await write(2500, 100);
  await pollUntil(async () => (await published()) === 2600, {
    timeoutMs: 30_000,
    description: 'events written after the PostgreSQL restart to be published',
  });
  await pollUntil(() => logger.lines.some((l) => l.msg.includes('LISTEN connection restored')), {
    timeoutMs: 30_000,
    description: 'LISTEN to reconnect',
  });
  // With a one-minute poll interval, this only arrives in time if NOTIFY works again.
  await write(2600, 50);
  await pollUntil(async () => (await published()) === 2650, {
    timeoutMs: 20_000,
    description: 'a NOTIFY-driven publish after the restart',
  });
  await relay.stop();
  await pollUntil(async () => (await count(testDb.db, 'inbox_event')) === 2650, {
    timeoutMs: 60_000,
    description: 'every event stored once in the inbox',
  });
  await writer.stop();

  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => new Set(collected.messages.map((m) => m.eventId)).size >= 2650, {
    timeoutMs: 30_000,
    description: 'all events readable from the topic',
  });
  await collected.stop();
  const expected = new Map<string, string[]>();
  const all = written.flat();
  const events = eventsFor(topic, 0, 2650);
  events.forEach((event, i) => {
    const list = expected.get(event.partitionKey) ?? [];
    list.push(all[i] ?? '');
    expected.set(event.partitionKey, list);
  });
  const result = checkOrder(collected.messages, expected);
  expect(result.outOfOrder).toEqual([]);
  expect(result.missing).toBe(0);
  const dropped = (await metrics.inboxDuplicatesTotal.get()).values[0]?.value ?? 0;
  console.log(`duplicates on the topic: ${result.duplicates}; dropped by the inbox: ${dropped}`);
  // The inbox holds each event once, however many copies Kafka delivered.
  expect(await count(testDb.db, 'inbox_event')).toBe(2650);

  // One warn when Kafka went away and one when PostgreSQL did; not one per retry.
  const warnings = logger.lines.filter(
    (l) => l.level === 'warn' && l.msg.includes('relay failing'),
  );
  expect(warnings.length).toBeGreaterThanOrEqual(1);
  expect(warnings.length).toBeLessThanOrEqual(3);
  expect(logger.lines.filter((l) => l.msg.includes('recovered')).length).toBe(warnings.length);
  expect((await metrics.publishFailuresTotal.get()).values[0]?.value).toBeGreaterThan(0);
  const scrape = await registry.metrics();
  expect(scrape).toMatch(/^outbox_unpublished_events 0$/m);
});
