import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import { createOutboxMetrics, replayOutbox, runRetention } from '../../src/ops.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  count,
  createKafka,
  createTopic,
  recordingLogger,
  seedInbox,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('operations');

const cli = fileURLToPath(new URL('../../src/cli/outbox.ts', import.meta.url));

it('replay (function and CLI) republishes the selected rows in order through the relay', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'replay', 1);
  const other = await createTopic(kafka, 'replay-other', 1);
  const events = (t: string): OutboxEventInput[] =>
    Array.from({ length: 20 }, (_, i) => ({
      eventType: 'Step',
      aggregateType: 'order',
      aggregateId: `o${i % 2}`,
      topic: t,
      partitionKey: `o${i % 2}`,
      payload: { i },
    }));
  const { eventIds } = await testDb.db
    .transaction()
    .execute((trx) => enqueueMany(trx, events(topic)));
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, events(other)));
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { pollIntervalMs: 50 },
  });
  await pollUntil(
    async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
    {
      timeoutMs: 20_000,
      description: 'everything published',
    },
  );

  expect(await replayOutbox(testDb.db, { topic })).toBe(20);
  await pollUntil(
    async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
    {
      timeoutMs: 20_000,
      description: 'the replay published',
    },
  );
  const ids = await testDb.db
    .selectFrom('outbox_event')
    .select('id')
    .where('topic', '=', topic)
    .orderBy('id')
    .execute();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cli, 'replay', '--from-id', ids[0]?.id ?? '', '--to-id', ids[4]?.id ?? '', '--topic', topic],
    {
      env: { ...process.env, DATABASE_URL: testDb.url },
    },
  );
  expect(stdout).toContain('queued 5 outbox event(s)');
  await pollUntil(
    async () => (await count(testDb.db, 'outbox_event WHERE published_at IS NULL')) === 0,
    {
      timeoutMs: 20_000,
      description: 'the CLI replay published',
    },
  );
  await relay.stop();

  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => collected.messages.length >= 45, {
    timeoutMs: 20_000,
    description: '20 + 20 + 5 messages',
  });
  await collected.stop();
  const expected = new Map<string, string[]>();
  events(topic).forEach((e, i) =>
    expected.set(e.partitionKey, [...(expected.get(e.partitionKey) ?? []), eventIds[i] ?? '']),
  );
  expect(checkOrder(collected.messages, expected)).toEqual({
    duplicates: 25,
    outOfOrder: [],
    missing: 0,
  });
  // Within the replayed stretch each key is again in order.
  const replayed = collected.messages.slice(20, 40).map((m) => m.eventId);
  for (const [, list] of expected) {
    expect(replayed.filter((id) => list.includes(id))).toEqual(list);
  }
});

it('retention deletes only old published / processed rows, in bounded batches', async () => {
  await sql`TRUNCATE outbox_event, inbox_event`.execute(testDb.db);
  const events: OutboxEventInput[] = Array.from({ length: 25 }, (_, i) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: 'o',
    topic: 'unused',
    partitionKey: 'o',
    payload: { i },
  }));
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, events));
  // 10 published long ago, 5 published just now, 10 never published (yet old).
  await sql`UPDATE outbox_event SET published_at = now() - interval '30 days', created_at = now() - interval '31 days'
    WHERE id IN (SELECT id FROM outbox_event ORDER BY id LIMIT 10)`.execute(testDb.db);
  await sql`UPDATE outbox_event SET published_at = now()
    WHERE id IN (SELECT id FROM outbox_event WHERE published_at IS NULL ORDER BY id LIMIT 5)`.execute(
    testDb.db,
  );
  await sql`UPDATE outbox_event SET created_at = now() - interval '60 days' WHERE published_at IS NULL`.execute(
    testDb.db,
  );
  await seedInbox(
    testDb.db,
    Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, eventType: 'X' })),
  );
  await sql`UPDATE inbox_event SET processed = true, processed_at = now() - interval '30 days'
    WHERE seq IN (SELECT seq FROM inbox_event ORDER BY seq LIMIT 7)`.execute(testDb.db);
  await sql`UPDATE inbox_event SET dead_at = now() - interval '30 days', received_at = now() - interval '30 days'
    WHERE NOT processed AND seq IN (SELECT seq FROM inbox_event WHERE NOT processed ORDER BY seq LIMIT 2)`.execute(
    testDb.db,
  );

  const registry = new Registry();
  createOutboxMetrics(registry, testDb.db);
  const before = await registry.metrics();
  expect(before).toMatch(/^outbox_unpublished_events 10$/m);
  expect(
    Number(/^outbox_oldest_unpublished_age_seconds (\S+)$/m.exec(before)?.[1]),
  ).toBeGreaterThan(59 * 86_400);
  expect(before).toMatch(/^inbox_backlog_events 3$/m);
  expect(before).toMatch(/^inbox_dead_events 2$/m);

  const result = await runRetention(testDb.db, {
    olderThan: 7 * 86_400_000,
    processedEventsOlderThan: 7 * 86_400_000,
    batchSize: 3,
  });
  expect(result).toMatchObject({ outboxDeleted: 10, inboxDeleted: 7, processedEventsDeleted: 0 });
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NULL')).toBe(10);
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NOT NULL')).toBe(5);
  expect(await count(testDb.db, 'inbox_event')).toBe(5);
  expect(
    await runRetention(testDb.db, {
      olderThan: 7 * 86_400_000,
      processedEventsOlderThan: 7 * 86_400_000,
    }),
  ).toMatchObject({
    outboxDeleted: 0,
    inboxDeleted: 0,
    processedEventsDeleted: 0,
  });
});
