import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Registry } from 'prom-client';
import { startInboxWriter } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('inbox_writer');

it('stores each event once, parks malformed messages and keeps going, commits offsets explicitly', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'inbox', 2);
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, testDb.db);
  const logger = recordingLogger();
  const groupId = `payments-${topic}`;

  const good = Array.from({ length: 40 }, (_, i) =>
    eventMessage(`order-${i % 5}`, 'OrderCreated', { i }),
  );
  const repeats = good.slice(0, 10); // redelivered / republished copies
  const garbage = [
    {
      key: 'order-0',
      value: 'not json {',
      headers: { event_id: good[0]?.eventId ?? '', event_type: 'X' },
    },
    { key: 'order-1', value: '{}', headers: { event_type: 'OrderCreated' } },
    {
      key: 'order-2',
      value: '{}',
      headers: { event_id: 'not-a-uuid', event_type: 'OrderCreated' },
    },
    eventMessage('order-3', 'SomethingUnknown', {}),
  ];
  await produce(kafka, topic, [...good.slice(0, 20), ...garbage, ...repeats, ...good.slice(20)]);

  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger,
    metrics,
    options: {
      groupId,
      topics: [topic],
      sessionTimeoutMs: 10_000,
      validate: (event) =>
        event.eventType === 'OrderCreated' ? undefined : `unknown event type ${event.eventType}`,
    },
  });
  await pollUntil(
    async () =>
      (await count(testDb.db, 'parked_message')) === 4 &&
      (await count(testDb.db, 'inbox_event')) === 40,
    {
      timeoutMs: 30_000,
      description: '40 inbox rows and 4 parked messages',
    },
  );
  const parked = await testDb.db.selectFrom('parked_message').selectAll().orderBy('id').execute();
  expect(parked.map((p) => p.reason)).toEqual(
    expect.arrayContaining([
      expect.stringContaining('not JSON'),
      'missing header event_id',
      expect.stringContaining('not a UUID'),
      'unknown event type SomethingUnknown',
    ]),
  );
  expect(parked.find((p) => p.reason.includes('not JSON'))?.message_value?.toString()).toBe(
    'not json {',
  );
  const row = await testDb.db
    .selectFrom('inbox_event')
    .selectAll()
    .where('event_id', '=', good[7]?.eventId ?? '')
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({
    partition_key: 'order-2',
    event_type: 'OrderCreated',
    payload: { i: 7 },
    processed: false,
  });

  // Offsets are committed explicitly up to the end of each partition.
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await pollUntil(
    async () => {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return ends.every((end) =>
        committed?.partitions.some((p) => p.partition === end.partition && p.offset === end.high),
      );
    },
    { timeoutMs: 20_000, description: 'committed offsets at the end of every partition' },
  );
  await admin.disconnect();

  // Still alive after the garbage: later events are stored, their repeats dropped. (Kafka
  // SIGKILL with a running writer is covered in relay-outages.test.ts.)
  const after = Array.from({ length: 10 }, (_, i) =>
    eventMessage(`order-${i}`, 'OrderCreated', { after: i }),
  );
  await produce(kafka, topic, [...after, ...after.slice(0, 3)]);
  await pollUntil(async () => (await count(testDb.db, 'inbox_event')) === 50, {
    timeoutMs: 60_000,
    description: 'events produced after the Kafka restart to be stored',
  });
  await writer.stop();

  const scrape = await registry.metrics();
  expect(scrape).toMatch(/^inbox_received_total 50$/m);
  // The 10 republished copies and the 3 later ones.
  const duplicates = Number(/^inbox_duplicates_dropped_total (\d+)$/m.exec(scrape)?.[1]);
  expect(duplicates).toBe(13);
  // The same repeats, counted on the rows that absorbed them; a first delivery counts nothing.
  const redeliveries = await testDb.db
    .selectFrom('inbox_event')
    .select(['event_id', 'redeliveries'])
    .where('redeliveries', '>', 0)
    .execute();
  const repeated = [...repeats, ...after.slice(0, 3)].map((m) => m.eventId);
  expect(Object.fromEntries(redeliveries.map((r) => [r.event_id, r.redeliveries]))).toEqual(
    Object.fromEntries(repeated.map((id) => [id, 1])),
  );
  expect(scrape).toMatch(/^inbox_backlog_events 50$/m);
  expect(scrape).toMatch(/^parked_messages 4$/m);
});
