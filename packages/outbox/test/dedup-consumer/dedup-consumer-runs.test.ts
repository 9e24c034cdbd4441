import { pollUntil } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { startDedupConsumer } from '../../src/index.ts';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  kafkaClient,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';
import { createOrderTable, type OrderDb } from '../support/order-table.ts';

const testDb = useTestDb('dedup_runs');
let db: Kysely<OrderDb>;
beforeAll(async () => {
  db = await createOrderTable(testDb);
});

it('events in a row commit together; one whose handler fails rolls back alone and is retried; the rest commit', async () => {
  const kafka = createKafka();
  // One partition, and every message produced before the consumer starts: one fetch, one batch.
  const topic = await createTopic(kafka, 'dedup_runs', 1);
  const orderIds = Array.from({ length: 9 }, (_, n) => `order-${n + 1}`);
  await db
    .insertInto('orders')
    .values(orderIds.map((id) => ({ id, status: 'new' })))
    .execute();
  const events = orderIds.map((id) => eventMessage(id, 'PaymentSucceeded', { orderId: id }));
  await produce(kafka, topic, events);

  const flaky = 'order-5';
  const calls = new Map<string, number>();
  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      groupId: `runs-${topic}`,
      topics: [topic],
      consumerName: 'order-status',
      backoff: { initialMs: 20, maxMs: 100 },
    },
    handle: async (trx, event) => {
      const { orderId } = event.payload as { orderId: string };
      const call = (calls.get(orderId) ?? 0) + 1;
      calls.set(orderId, call);
      // Its write is made, then the handler fails: the savepoint must take the write back.
      await trx
        .updateTable('orders')
        .set((eb) => ({ status: 'paid', payments: eb('payments', '+', 1) }))
        .where('id', '=', orderId)
        .execute();
      if (orderId === flaky && call === 1) throw new Error('the first try fails');
    },
  });
  try {
    await pollUntil(async () => (await count(testDb.db, 'processed_event')) === 9, {
      timeoutMs: 30_000,
      description: 'every event applied',
    });
  } finally {
    await consumer.stop();
  }
  const orders = await db.selectFrom('orders').select(['id', 'payments']).orderBy('id').execute();
  expect(orders.map((order) => order.payments)).toEqual(orderIds.map(() => 1));
  expect(calls.get(flaky)).toBe(2);
  // now() is a transaction's start: the four events before the failing one share one value,
  // the four after it another, and the retried one has its own.
  const applied = await sql<{ order_id: string; at: Date }>`
    SELECT o.id AS order_id, p.processed_at AS at
    FROM processed_event p
    JOIN unnest(${events.map((e) => e.eventId)}::uuid[], ${orderIds}::text[]) AS o(event_id, id)
      ON o.event_id = p.event_id
  `.execute(db);
  const at = new Map(applied.rows.map((row) => [row.order_id, row.at.getTime()]));
  const distinct = (ids: readonly string[]) => new Set(ids.map((id) => at.get(id))).size;
  expect(distinct(['order-1', 'order-2', 'order-3', 'order-4'])).toBe(1);
  expect(distinct(['order-6', 'order-7', 'order-8', 'order-9'])).toBe(1);
  expect(distinct(['order-1', 'order-5', 'order-9'])).toBe(3);
});
