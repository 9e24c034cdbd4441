import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Message } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import { startDedupConsumer } from '../../src/index.ts';
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
import { OVERSIZED_TOPIC_CONFIG, oversizedPayloads } from '../support/oversized-payloads.ts';
import { createConfiguredTopic } from '../support/topics.ts';

const testDb = useTestDb('dedup_poison');
let db: Kysely<OrderDb>;
beforeAll(async () => {
  db = await createOrderTable(testDb);
});

function withHeader(message: Message, name: string, value: Buffer | string): Message {
  return { ...message, headers: { ...message.headers, [name]: value } };
}

it('parks at once an event whose data PostgreSQL refuses, parks NUL and non-UTF-8 headers as bytes, and keeps going', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'dedup-poison', 1);
  const orderIds = Array.from({ length: 6 }, (_, i) => `order-${i}`);
  await db
    .insertInto('orders')
    .values(orderIds.map((id) => ({ id, status: 'new', note: null })))
    .execute();
  const paid = (id: string, note: string) =>
    eventMessage(id, 'PaymentSucceeded', { orderId: id, note });

  // Valid in every way, but the handler writes the NUL into a text column.
  const nulNote = paid('order-1', 'a\u0000b');
  // Rejected by validation; parking must keep its header as it is.
  const nulEventType = withHeader(paid('order-2', 'x'), 'event_type', 'Payment\u0000Succeeded');
  const badUtf8Header = withHeader(paid('order-3', 'x'), 'traceparent', Buffer.from([0xff]));
  const good = orderIds.map((id) => paid(id, `note of ${id}`));
  await produce(kafka, topic, [
    ...good.slice(0, 2),
    nulNote,
    nulEventType,
    badUtf8Header,
    ...good.slice(2),
  ]);

  const calls = new Map<string, number>();
  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      groupId: `orders-${topic}`,
      topics: [topic],
      consumerName: 'order-status',
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 100 },
      validate: (event) =>
        event.eventType === 'PaymentSucceeded'
          ? undefined
          : `unknown event type ${event.eventType}`,
    },
    handle: async (trx, event) => {
      calls.set(event.eventId, (calls.get(event.eventId) ?? 0) + 1);
      const { orderId, note } = event.payload as { orderId: string; note: string };
      await trx
        .updateTable('orders')
        .set({ status: 'paid', note })
        .where('id', '=', orderId)
        .execute();
    },
  });
  await pollUntil(
    async () =>
      (await count(testDb.db, "orders WHERE status = 'paid'")) === orderIds.length &&
      (await count(testDb.db, 'parked_message')) === 3,
    { timeoutMs: 30_000, description: 'every good event applied and three messages parked' },
  );
  await consumer.stop();

  // PostgreSQL's refusal is not a handler bug to retry (maxAttempts is 3): one call in the set
  // its fetch was applied as, at most one alone once the set was split, then parked.
  expect(calls.get(nulNote.eventId)).toBeLessThanOrEqual(2);
  const parked = await sql<{
    message_value: Buffer;
    header_names: Buffer[];
    header_values: Buffer[];
    reason: string;
  }>`SELECT message_value, header_names, header_values, reason FROM parked_message ORDER BY id`.execute(
    db,
  );
  const header = (row: (typeof parked.rows)[number] | undefined, name: string) =>
    row?.header_values[row.header_names.findIndex((n) => n.toString() === name)];
  const [refused, unknownType, notUtf8] = parked.rows;
  expect(refused?.reason).toMatch(/^PostgreSQL refused the data: 22021 invalid byte sequence/);
  expect(refused?.message_value.toString()).toBe(nulNote.value);
  expect(unknownType?.reason).toBe('unknown event type Payment\\u0000Succeeded');
  expect(header(unknownType, 'event_type')).toEqual(Buffer.from('Payment\u0000Succeeded'));
  expect(notUtf8?.reason).toBe('header traceparent is not valid UTF-8');
  expect(header(notUtf8, 'traceparent')).toEqual(Buffer.from([0xff]));
});

it('applies deep, long and wide payloads once each, and the next message of the partition after them', async () => {
  const kafka = createKafka();
  const topic = await createConfiguredTopic(kafka, 'dedup-oversized', 1, OVERSIZED_TOPIC_CONFIG);
  const orderId = 'order-oversized';
  await db.insertInto('orders').values({ id: orderId, status: 'new', note: null }).execute();
  const corpus = oversizedPayloads({ orderId, note: 'oversized' }).map((payload) => ({
    ...eventMessage(orderId, 'PaymentSucceeded', {}),
    value: payload.json,
  }));
  const after = eventMessage(orderId, 'PaymentSucceeded', { orderId, note: 'after' });
  await produce(kafka, topic, [...corpus, after]);

  const calls = new Map<string, number>();
  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      groupId: `orders-${topic}`,
      topics: [topic],
      consumerName: 'order-status',
      maxAttempts: 3,
      backoff: { initialMs: 20, maxMs: 100 },
    },
    handle: async (trx, event) => {
      calls.set(event.eventId, (calls.get(event.eventId) ?? 0) + 1);
      const { note } = event.payload as { note: string };
      await trx
        .updateTable('orders')
        .set({ status: 'paid', note })
        .where('id', '=', orderId)
        .execute();
    },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, `orders WHERE id = '${orderId}' AND note = 'after'`)) === 1,
      { timeoutMs: 60_000, description: 'the message after the oversized ones applied' },
    );
  } finally {
    await consumer.stop();
  }
  expect([...corpus, after].map((m) => calls.get(m.eventId))).toEqual(
    [...corpus, after].map(() => 1),
  );
  expect(await count(testDb.db, `parked_message WHERE topic = '${topic}'`)).toBe(0);
});
