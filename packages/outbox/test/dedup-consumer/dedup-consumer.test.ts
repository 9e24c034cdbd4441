import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kysely } from 'kysely';
import { Registry } from 'prom-client';
import { startDedupConsumer } from '../../src/index.ts';
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
import { createOrderTable, type OrderDb } from '../support/order-table.ts';

const testDb = useTestDb('dedup');
let db: Kysely<OrderDb>;
beforeAll(async () => {
  db = await createOrderTable(testDb);
});

it('the dedup consumer applies each event once, counts repeats, parks garbage and poison, keeps going', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'dedup', 2);
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, testDb.db);
  const orderIds = Array.from({ length: 10 }, (_, i) => `order-${i}`);
  await db
    .insertInto('orders')
    .values(orderIds.map((id) => ({ id, status: 'new', payments: 0 })))
    .execute();

  const paid = orderIds.map((id) => eventMessage(id, 'PaymentSucceeded', { orderId: id }));
  const poison = eventMessage('order-0', 'PaymentSucceeded', { orderId: 'does-not-exist' });
  await produce(kafka, topic, [
    ...paid.slice(0, 5),
    {
      key: 'order-1',
      value: '%%%',
      headers: { event_id: paid[1]?.eventId ?? '', event_type: 'PaymentSucceeded' },
    },
    poison,
    ...paid, // the first five arrive twice
  ]);

  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: {
      groupId: `orders-${topic}`,
      topics: [topic],
      consumerName: 'order-status',
      maxAttempts: 2,
      backoff: { initialMs: 20, maxMs: 100 },
      sessionTimeoutMs: 10_000,
    },
    handle: async (trx, event) => {
      const { orderId } = event.payload as { orderId: string };
      const updated = await trx
        .updateTable('orders')
        .set((eb) => ({ status: 'paid', payments: eb('payments', '+', 1) }))
        .where('id', '=', orderId)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n) throw new Error(`order ${orderId} not found`);
    },
  });
  await pollUntil(
    async () =>
      (await count(testDb.db, "orders WHERE status = 'paid'")) === 10 &&
      (await count(testDb.db, 'parked_message')) === 2,
    {
      timeoutMs: 30_000,
      description: 'all orders paid and two messages parked',
    },
  );
  // Produced after the poison: the partition was not blocked.
  const late = eventMessage('order-0', 'PaymentSucceeded', { orderId: 'order-0' });
  await produce(kafka, topic, [late]);
  await pollUntil(
    async () =>
      (
        await db
          .selectFrom('orders')
          .select('payments')
          .where('id', '=', 'order-0')
          .executeTakeFirst()
      )?.payments === 2,
    {
      timeoutMs: 20_000,
      description: 'a later event on the poisoned key to be applied',
    },
  );
  await consumer.stop();

  const orders = await db
    .selectFrom('orders')
    .selectAll()
    .where('id', 'in', orderIds)
    .orderBy('id')
    .execute();
  expect(orders.map((o) => o.payments)).toEqual([2, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  const parked = await db
    .selectFrom('parked_message')
    .select(['reason', 'consumer'])
    .orderBy('id')
    .execute();
  expect(parked).toEqual(
    expect.arrayContaining([
      { consumer: 'order-status', reason: expect.stringContaining('not JSON') },
      { consumer: 'order-status', reason: expect.stringContaining('handler failed 2 times') },
    ]),
  );
  const scrape = await registry.metrics();
  expect(scrape).toMatch(/^processed_event_applied_total\{consumer="order-status"\} 11$/m);
  expect(scrape).toMatch(/^processed_event_duplicates_total\{consumer="order-status"\} 5$/m);
  // The same five repeats, each on the dedup row that caught it.
  const repeated = await db
    .selectFrom('processed_event')
    .select(['event_id', 'redeliveries'])
    .where('consumer', '=', 'order-status')
    .where('redeliveries', '>', 0)
    .execute();
  expect(Object.fromEntries(repeated.map((r) => [r.event_id, r.redeliveries]))).toEqual(
    Object.fromEntries(paid.slice(0, 5).map((m) => [m.eventId, 1])),
  );
  expect(scrape).toMatch(/^parked_messages_total\{consumer="order-status"\} 2$/m);
});

it('applies several partitions at the same time, each in its own order', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'dedup_parallel', 2);
  // Each partition's first step needs the other partition's progress: `waits 1` waits for
  // `frees 1`, `frees 2` for `waits 1`. One partition at a time, whichever went first would
  // wait for the other until it failed (and, with one attempt, was parked).
  const applied: string[] = [];
  const waitsFor = async (key: string): Promise<void> => {
    await pollUntil(() => applied.includes(key), {
      timeoutMs: 20_000,
      description: `${key} applied by another partition meanwhile`,
    });
  };
  await produce(kafka, topic, [
    { ...eventMessage('waits', 'Step', { n: 1 }), partition: 0 },
    { ...eventMessage('waits', 'Step', { n: 2 }), partition: 0 },
    { ...eventMessage('frees', 'Step', { n: 1 }), partition: 1 },
    { ...eventMessage('frees', 'Step', { n: 2 }), partition: 1 },
  ]);
  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      groupId: `parallel-${topic}`,
      topics: [topic],
      consumerName: 'parallel',
      maxAttempts: 1,
      sessionTimeoutMs: 10_000,
    },
    handle: async (_trx, event) => {
      const { n } = event.payload as { n: number };
      if (event.partitionKey === 'waits' && n === 1) await waitsFor('frees 1');
      if (event.partitionKey === 'frees' && n === 2) await waitsFor('waits 1');
      applied.push(`${event.partitionKey} ${n}`);
    },
  });
  try {
    await pollUntil(() => applied.length === 4, {
      timeoutMs: 60_000,
      description: 'all four events applied',
    });
  } finally {
    await consumer.stop();
  }
  expect(applied.filter((step) => step.startsWith('waits'))).toEqual(['waits 1', 'waits 2']);
  expect(applied.filter((step) => step.startsWith('frees'))).toEqual(['frees 1', 'frees 2']);
  expect(await count(testDb.db, "parked_message WHERE consumer = 'parallel'")).toBe(0);
});
