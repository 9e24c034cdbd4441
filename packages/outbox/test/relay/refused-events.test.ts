import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  enqueue,
  enqueueMany,
  startRelay,
  type OutboxEventInput,
  type RelayOptions,
} from '../../src/index.ts';
import {
  createOutboxMetrics,
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from '../../src/ops.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';
import {
  copiesByEventId,
  createConfiguredTopic,
  keysInPartition,
  messagesOnTopic,
  partitionOf,
} from '../support/topics.ts';

const testDb = useTestDb('refused');
let kafka: Kafka;
beforeAll(async () => {
  kafka = createKafka();
});
beforeEach(async () => {
  await sql`TRUNCATE outbox_event`.execute(testDb.db);
});

const event = (topic: string, key: string, payload: unknown = {}): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: key,
  topic,
  partitionKey: key,
  payload,
});

/** Runs a relay (and its metrics) around `body`, stopping it even when `body` throws. */
async function withRelay<T>(
  options: Partial<RelayOptions>,
  body: (relay: { registry: Registry; logger: ReturnType<typeof recordingLogger> }) => Promise<T>,
): Promise<T> {
  const registry = new Registry();
  const logger = recordingLogger();
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger,
    metrics: createOutboxMetrics(registry, testDb.db, { backlogCacheMs: 0 }),
    options: {
      pollIntervalMs: 50,
      backoff: { initialMs: 50, maxMs: 200, multiplier: 2 },
      ...options,
    },
  });
  try {
    return await body({ registry, logger });
  } finally {
    await relay.stop();
  }
}

const unpublished = () => count(testDb.db, 'outbox_event WHERE published_at IS NULL');
const failedRow = (eventId: string) =>
  testDb.db
    .selectFrom('outbox_event')
    .select(['publish_attempts', 'last_error', 'failed_at', 'published_at', 'skipped_at'])
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();

it('an oversize event on its own key is set aside; the others go out once each; after skip its key flows in order', async () => {
  const topic = await createTopic(kafka, 'oversize', 3);
  const keys = Array.from({ length: 8 }, (_, i) => `order-${i}`);
  // One transaction, so one batch: the oversize event sits in the middle of it. It goes in
  // through enqueue with the limit lifted, as a row written before the limit existed would.
  const ids = await testDb.db.transaction().execute(async (trx) => ({
    before: (
      await enqueueMany(
        trx,
        keys.flatMap((k) => [event(topic, k, 1), event(topic, k, 2)]),
      )
    ).eventIds,
    big: (
      await enqueue(trx, event(topic, 'big', { blob: 'x'.repeat(1_500_000) }), {
        maxEventBytes: 10_000_000,
      })
    ).eventId,
    after: (
      await enqueueMany(trx, [
        event(topic, 'big', 2),
        event(topic, 'big', 3),
        ...keys.map((k) => event(topic, k, 3)),
      ])
    ).eventIds,
  }));
  const others = [...ids.before, ...ids.after.slice(2)];
  const bigLater = ids.after.slice(0, 2);

  await withRelay({}, async ({ registry, logger }) => {
    await pollUntil(async () => (await unpublished()) === 3, {
      timeoutMs: 30_000,
      description: 'every event but the oversize one and its key published',
    });
    // Each event once: the topic holds exactly as many messages as were published.
    expect(await messagesOnTopic(kafka, topic)).toBe(others.length);
    const row = await failedRow(ids.big);
    expect(row.failed_at).not.toBeNull();
    expect(row.last_error).toMatch(/EVENT_TOO_LARGE/);
    expect(row.publish_attempts).toBe(1);
    for (const id of bigLater) {
      expect(await failedRow(id)).toMatchObject({ failed_at: null, published_at: null });
    }
    const failed = await listFailedOutboxEvents(testDb.db);
    expect(failed).toMatchObject([
      { eventId: ids.big, topic, partitionKey: 'big', attempts: 1, waitingBehind: 2 },
    ]);
    const scraped = await registry.metrics();
    expect(scraped).toMatch(/^outbox_failed_events 1$/m);
    expect(scraped).toMatch(/^outbox_publish_refused_total 1$/m);
    const warned = logger.lines.filter(
      (line) => line.level === 'warn' && 'eventId' in line.obj && line.obj.eventId === ids.big,
    );
    expect(warned).toHaveLength(1);

    expect(await skipFailedOutboxEvents(testDb.db, [ids.big])).toBe(1);
    expect(await skipFailedOutboxEvents(testDb.db, [ids.big])).toBe(0);
    await pollUntil(async () => (await unpublished()) === 0, {
      timeoutMs: 20_000,
      description: 'the key of the skipped event published',
    });
    expect(await registry.metrics()).toMatch(/^outbox_failed_events 0$/m);
  });

  // The skipped row stays, marked, with its reason.
  const skipped = await failedRow(ids.big);
  expect(skipped.skipped_at).not.toBeNull();
  expect(skipped.failed_at).not.toBeNull();
  expect(skipped.last_error).toMatch(/EVENT_TOO_LARGE/);
  expect(await messagesOnTopic(kafka, topic)).toBe(others.length + 2);
  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => collected.messages.length >= others.length + 2, {
    timeoutMs: 20_000,
    description: 'every message read back',
  });
  await collected.stop();
  const expected = new Map<string, string[]>([['big', bigLater]]);
  for (const [i, key] of keys.entries()) {
    expected.set(key, [
      ids.before[2 * i] ?? '',
      ids.before[2 * i + 1] ?? '',
      ids.after[2 + i] ?? '',
    ]);
  }
  expect(checkOrder(collected.messages, expected)).toEqual({
    duplicates: 0,
    outOfOrder: [],
    missing: 0,
  });
});

it('an invalid topic is refused by enqueue, and a row that bypassed enqueue is set aside by the relay', async () => {
  const topic = await createTopic(kafka, 'valid', 2);
  for (const bad of ['bad topic!', '..', 'x'.repeat(250)]) {
    await expect(
      testDb.db.transaction().execute((trx) => enqueue(trx, event(bad, 'k'))),
    ).rejects.toMatchObject({ name: 'OutboxError', code: 'INVALID_TOPIC' });
  }
  expect(await count(testDb.db, 'outbox_event')).toBe(0);

  const ids = await testDb.db.transaction().execute(async (trx) => {
    const first = await enqueueMany(trx, [event(topic, 'a', 1), event(topic, 'b', 1)]);
    const bad = randomUUID();
    await trx
      .insertInto('outbox_event')
      .values({
        event_id: bad,
        event_type: 'Step',
        aggregate_type: 'order',
        aggregate_id: 'b',
        topic: 'bad topic!',
        partition_key: 'b',
        payload: '{}',
      })
      .execute();
    const last = await enqueueMany(trx, [event(topic, 'a', 2), event(topic, 'b', 3)]);
    return { good: [...first.eventIds, last.eventIds[0] ?? ''], bad, waiting: last.eventIds[1] };
  });

  await withRelay({}, async () => {
    await pollUntil(async () => (await unpublished()) === 2, {
      timeoutMs: 30_000,
      description: 'the valid events published',
    });
  });
  expect(await messagesOnTopic(kafka, topic)).toBe(3);
  const row = await failedRow(ids.bad);
  expect(row.failed_at).not.toBeNull();
  expect(row.last_error).toMatch(/INVALID_TOPIC/);
  expect(await failedRow(ids.waiting ?? '')).toMatchObject({ failed_at: null, published_at: null });
});

it('a record the topic refuses (its max.message.bytes is lower) is set aside; the partitions Kafka took are not sent twice', async () => {
  const partitions = 3;
  const topic = await createConfiguredTopic(kafka, 'small', partitions, {
    'max.message.bytes': '2000',
  });
  // The oversize record shares its partition with a small key; two small keys sit in each
  // other partition. Each of those partitions' share fits the limit, so the broker appends
  // them while it refuses the oversize record's partition in the same produce request.
  const bigPartition = partitionOf('big', partitions);
  const [neighbour = ''] = keysInPartition('neighbour-', bigPartition, partitions, 1);
  const otherKeys = [0, 1, 2]
    .filter((p) => p !== bigPartition)
    .flatMap((p) => keysInPartition(`key-${p}-`, p, partitions, 2));
  const ids = await testDb.db.transaction().execute(async (trx) => ({
    others: (
      await enqueueMany(
        trx,
        otherKeys.map((key) => event(topic, key, 1)),
      )
    ).eventIds,
    neighbour1: (await enqueue(trx, event(topic, neighbour, 1))).eventId,
    big: (await enqueue(trx, event(topic, 'big', { blob: 'x'.repeat(3000) }))).eventId,
    big2: (await enqueue(trx, event(topic, 'big', 2))).eventId,
    neighbour2: (await enqueue(trx, event(topic, neighbour, 2))).eventId,
  }));
  const published = [...ids.others, ids.neighbour1, ids.neighbour2];

  await withRelay({}, async () => {
    await pollUntil(async () => (await unpublished()) === 2, {
      timeoutMs: 30_000,
      description: 'all but the refused record and its key published',
    });
  });
  expect(await messagesOnTopic(kafka, topic)).toBe(published.length);
  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => collected.messages.length >= published.length, {
    timeoutMs: 20_000,
    description: 'every message read back',
  });
  await collected.stop();
  expect([...copiesByEventId(collected.messages)].sort()).toEqual(
    published.map((id) => [id, 1]).sort(),
  );
  const row = await failedRow(ids.big);
  expect(row.failed_at).not.toBeNull();
  expect(row.last_error).toMatch(/MESSAGE_TOO_LARGE/);
  expect(await failedRow(ids.big2)).toMatchObject({ failed_at: null, published_at: null });
});

it('a topic that does not exist (no auto-create) is retried, then set aside; once it exists, retry publishes its key in order', async () => {
  const topic = await createTopic(kafka, 'present', 2);
  const missing = `missing-${randomUUID().slice(0, 8)}`;
  const ids = await testDb.db.transaction().execute(async (trx) => ({
    good: (
      await enqueueMany(trx, [event(topic, 'a', 1), event(topic, 'b', 1), event(topic, 'a', 2)])
    ).eventIds,
    missing: (await enqueue(trx, event(missing, 'm', 1))).eventId,
    // The same key's next event goes to the topic that exists: it waits all the same.
    behind: (await enqueue(trx, event(topic, 'm', 2))).eventId,
  }));

  await withRelay({ allowAutoTopicCreation: false, maxPublishAttempts: 2 }, async ({ logger }) => {
    await pollUntil(async () => (await failedRow(ids.missing)).failed_at !== null, {
      timeoutMs: 30_000,
      description: 'the event of the missing topic set aside',
    });
    expect(await unpublished()).toBe(2);
    expect(await messagesOnTopic(kafka, topic)).toBe(3);
    const row = await failedRow(ids.missing);
    expect(row.publish_attempts).toBe(2);
    expect(row.last_error).toMatch(/UNKNOWN_TOPIC_OR_PARTITION|KafkaJSMetadataNotLoaded/);
    expect(await failedRow(ids.behind)).toMatchObject({ failed_at: null, published_at: null });
    // Paced and logged once per state change, not once per try.
    const refusedWarnings = logger.lines.filter(
      (line) => line.level === 'warn' && line.msg.includes('PUBLISH_REFUSED'),
    );
    expect(refusedWarnings).toHaveLength(1);

    const admin = kafka.admin();
    await admin.connect();
    try {
      expect(await admin.listTopics()).not.toContain(missing);
      await admin.createTopics({
        topics: [{ topic: missing, numPartitions: 1 }],
        waitForLeaders: true,
      });
    } finally {
      await admin.disconnect();
    }
    expect(await retryFailedOutboxEvents(testDb.db, [ids.missing])).toBe(1);
    await pollUntil(async () => (await unpublished()) === 0, {
      timeoutMs: 20_000,
      description: 'the retried event and the one behind it published',
    });
  });
  const retried = await failedRow(ids.missing);
  expect(retried).toMatchObject({ failed_at: null, skipped_at: null });
  expect(retried.published_at).not.toBeNull();
  expect(await messagesOnTopic(kafka, missing)).toBe(1);
  expect(await messagesOnTopic(kafka, topic)).toBe(4);
  // Per key in commit order: m's second event went out only after its first.
  const order = await testDb.db
    .selectFrom('outbox_event')
    .select(['event_id', 'published_at'])
    .where('partition_key', '=', 'm')
    .orderBy('id')
    .execute();
  expect(order.map((row) => row.event_id)).toEqual([ids.missing, ids.behind]);
  const [first, second] = order.map((row) => row.published_at?.getTime() ?? Infinity);
  expect(first).toBeLessThanOrEqual(second ?? -Infinity);
});
