import { randomUUID } from 'node:crypto';
import { topics } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readCounter,
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';

let system: InProcessSystem;
beforeAll(async () => {
  system = await startServicesInOneProcess();
});
afterAll(async () => system?.stop());

/**
 * A Kafka message as the relay writes it: key = order id, value = JSON payload, the event's
 * identity in headers (the outbox library's wire format).
 */
function eventMessage(event: {
  eventId: string;
  eventType: string;
  orderId: string;
  payload: unknown;
}): Message {
  return {
    key: event.orderId,
    value: JSON.stringify(event.payload),
    headers: {
      event_id: event.eventId,
      event_type: event.eventType,
      aggregate_type: event.eventType.startsWith('Order') ? 'order' : 'payment',
      aggregate_id: event.orderId,
      occurred_at: new Date().toISOString(),
    },
  };
}

async function produce(topic: string, messages: Message[]): Promise<void> {
  const producer = system.kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, messages });
  } finally {
    await producer.disconnect();
  }
}

async function insertPendingOrder(amount: number): Promise<string> {
  const id = randomUUID();
  // Straight into the table, without the outbox: the test produces the events itself.
  await system.orderDb
    .insertInto('orders')
    .values({ id, customer_id: 'dup', amount, currency: 'EUR', status: 'PENDING' })
    .execute();
  return id;
}

describe('the same event produced twice straight to Kafka', () => {
  it('payment-service (inbox): one inbox row counting the repeat, one payment, one PaymentCompleted', async () => {
    const orderId = await insertPendingOrder(500);
    const created = {
      eventId: randomUUID(),
      eventType: 'OrderCreated',
      orderId,
      payload: {
        schemaVersion: 1,
        orderId,
        customerId: 'dup',
        amount: 500,
        currency: 'EUR',
        createdAt: new Date().toISOString(),
      },
    };
    const cancelled = {
      eventId: randomUUID(),
      eventType: 'OrderCancelled',
      orderId,
      payload: { schemaVersion: 1, orderId, cancelledAt: new Date().toISOString() },
    };
    const duplicatesBefore = await readCounter(
      system.payments.url,
      'inbox_duplicates_dropped_total',
    );
    // The cancel comes after both copies on the same key: once it is handled, both copies were read.
    await produce(topics.orderEvents, [
      eventMessage(created),
      eventMessage(created),
      eventMessage(cancelled),
    ]);

    await pollUntil(
      async () =>
        (
          await system.orderDb
            .selectFrom('orders')
            .select('payment_status')
            .where('id', '=', orderId)
            .executeTakeFirst()
        )?.payment_status === 'REFUNDED',
      { timeoutMs: 60_000, description: 'the order to be paid, then refunded' },
    );
    const inboxRows = await system.paymentDb
      .selectFrom('inbox_event')
      .select(['event_id', 'redeliveries'])
      .where('event_id', 'in', [created.eventId, cancelled.eventId])
      .orderBy('seq')
      .execute();
    // One row per event; the row of the repeated one counts the copy it absorbed.
    expect(inboxRows).toEqual([
      { event_id: created.eventId, redeliveries: 1 },
      { event_id: cancelled.eventId, redeliveries: 0 },
    ]);
    const payments = await system.paymentDb
      .selectFrom('payments')
      .select('status')
      .where('order_id', '=', orderId)
      .execute();
    expect(payments).toEqual([{ status: 'REFUNDED' }]);
    const events = await system.paymentDb
      .selectFrom('outbox_event')
      .select('event_type')
      .where('partition_key', '=', orderId)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(['PaymentCompleted', 'PaymentRefunded']);
    expect(
      await readCounter(system.payments.url, 'inbox_duplicates_dropped_total'),
    ).toBeGreaterThan(duplicatesBefore);
  });

  it('order-service (processed_event): applied once, the repeat counted on its row and ignored', async () => {
    const orderId = await insertPendingOrder(700);
    const paymentId = randomUUID();
    const money = { schemaVersion: 1, paymentId, orderId, amount: 700, currency: 'EUR' };
    const completed = {
      eventId: randomUUID(),
      eventType: 'PaymentCompleted',
      orderId,
      payload: { ...money, completedAt: new Date().toISOString() },
    };
    const refunded = {
      eventId: randomUUID(),
      eventType: 'PaymentRefunded',
      orderId,
      payload: { ...money, refundedAt: new Date().toISOString() },
    };
    const duplicatesBefore = await readCounter(
      system.orders.url,
      'processed_event_duplicates_total',
    );
    await produce(topics.paymentEvents, [
      eventMessage(completed),
      eventMessage(completed),
      eventMessage(refunded),
    ]);

    const order = await pollUntil(
      async () => {
        const row = await system.orderDb
          .selectFrom('orders')
          .selectAll()
          .where('id', '=', orderId)
          .executeTakeFirst();
        return row?.payment_status === 'REFUNDED' ? row : undefined;
      },
      { timeoutMs: 60_000, description: 'both payment events to be applied' },
    );
    // Both copies of PaymentCompleted were read before the refund (same key, earlier offsets).
    expect(order).toMatchObject({
      status: 'PAID',
      payment_status: 'REFUNDED',
      payment_id: paymentId,
    });
    const processed = await system.orderDb
      .selectFrom('processed_event')
      .select(['event_id', 'redeliveries'])
      .where('event_id', 'in', [completed.eventId, refunded.eventId])
      .execute();
    expect(processed).toEqual(
      expect.arrayContaining([
        { event_id: completed.eventId, redeliveries: 1 },
        { event_id: refunded.eventId, redeliveries: 0 },
      ]),
    );
    expect(processed).toHaveLength(2);
    expect(await readCounter(system.orders.url, 'processed_event_duplicates_total')).toBe(
      duplicatesBefore + 1,
    );
  });
});
