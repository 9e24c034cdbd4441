import { randomUUID } from 'node:crypto';
import { validate } from '@outbox-inbox/contracts';
import type { InboxEvent, InboxHandler } from '@outbox-inbox/outbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentDatabase } from '../../src/database/schema.ts';
import {
  decidePayment,
  handleOrderCancelled,
  handleOrderCreated,
  handleOrderCreatedBatch,
  simulatedGateway,
} from '../../src/index.ts';
import {
  createPaymentTestContext,
  type PaymentTestContext,
} from '../support/payment-test-context.ts';

let ctx: PaymentTestContext;
beforeAll(async () => {
  ctx = await createPaymentTestContext();
});
afterAll(async () => ctx.close());

const rules = { amountLimit: 10_000, latencyMs: 0 };

function inboxEvent(eventType: string, payload: unknown, orderId: string): InboxEvent {
  return {
    eventId: randomUUID(),
    eventType,
    aggregateType: 'order',
    aggregateId: orderId,
    partitionKey: orderId,
    payload,
    occurredAt: new Date(),
    topic: 'order.events',
    partition: 0,
    offset: '0',
    headers: {},
    receivedAt: new Date(),
    attempts: 0,
  };
}

function orderCreated(amount: number): InboxEvent {
  const orderId = randomUUID();
  const payload = {
    schemaVersion: 1,
    orderId,
    customerId: 'c-1',
    amount,
    currency: 'EUR',
    createdAt: new Date().toISOString(),
  };
  return inboxEvent('OrderCreated', payload, orderId);
}

async function run(handler: InboxHandler<PaymentDatabase>, event: InboxEvent): Promise<void> {
  if (typeof handler === 'function') {
    await ctx.db.transaction().execute((trx) => handler(trx, event));
    return;
  }
  // As the processor runs it: the provider call with no transaction, then the short one.
  const signal = new AbortController().signal;
  if ('applyBatch' in handler) {
    const result = handler.call === undefined ? undefined : await handler.call(event, signal);
    await ctx.db.transaction().execute((trx) => handler.applyBatch(trx, [{ event, result }]));
    return;
  }
  const result = await handler.call(event, signal);
  await ctx.db.transaction().execute((trx) => handler.apply(trx, event, result));
}

async function eventsFor(orderId: string) {
  return ctx.db
    .selectFrom('outbox_event')
    .selectAll()
    .where('partition_key', '=', orderId)
    .orderBy('id')
    .execute();
}

async function historyOf(orderId: string) {
  const rows = await ctx.db
    .selectFrom('payment_history')
    .select(['event_type', 'outcome'])
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => `${row.event_type}:${row.outcome}`);
}

describe('OrderCreated', () => {
  it('creates one completed payment and a valid PaymentCompleted, even when handled twice', async () => {
    const event = orderCreated(2500);
    await run(handleOrderCreated(simulatedGateway(rules)), event);
    await run(handleOrderCreated(simulatedGateway(rules)), event);
    const payments = await ctx.db
      .selectFrom('payments')
      .selectAll()
      .where('order_id', '=', event.partitionKey)
      .execute();
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({
      status: 'COMPLETED',
      amount: '2500',
      failure_reason: null,
    });
    const events = await eventsFor(event.partitionKey);
    expect(events.map((e) => e.event_type)).toEqual(['PaymentCompleted']);
    expect(events[0]).toMatchObject({ topic: 'payment.events', aggregate_type: 'payment' });
    expect(validate('PaymentCompleted', events[0]?.payload)).toBeUndefined();
    // The second application changed nothing, and still shows: the suite counts applications.
    expect(await historyOf(event.partitionKey)).toEqual([
      'OrderCreated:COMPLETED',
      'OrderCreated:UNCHANGED',
    ]);
  });

  it('declines an amount above the limit with PaymentFailed', async () => {
    const event = orderCreated(10_001);
    await run(handleOrderCreated(simulatedGateway(rules)), event);
    const events = await eventsFor(event.partitionKey);
    expect(events.map((e) => e.event_type)).toEqual(['PaymentFailed']);
    expect(validate('PaymentFailed', events[0]?.payload)).toBeUndefined();
  });

  it('keeps one payment per order when two attempts race (the unique constraint)', async () => {
    const event = orderCreated(100);
    const slow = handleOrderCreated(simulatedGateway({ amountLimit: 10_000, latencyMs: 200 }));
    await Promise.all([run(slow, event), run(slow, event)]);
    const payments = await ctx.db
      .selectFrom('payments')
      .select('id')
      .where('order_id', '=', event.partitionKey)
      .execute();
    expect(payments).toHaveLength(1);
    expect((await eventsFor(event.partitionKey)).map((e) => e.event_type)).toEqual([
      'PaymentCompleted',
    ]);
  });
});

describe('OrderCreated, the batch form', () => {
  it('applies a batch as each event alone: a repeat changes nothing, a declined order fails', async () => {
    const paid = orderCreated(2500);
    const declined = orderCreated(10_001);
    const batch = handleOrderCreatedBatch(simulatedGateway(rules));
    const items = [paid, declined].map((event) => ({
      event,
      result: decidePayment(event.payload as { amount: number }, rules),
    }));
    await ctx.db.transaction().execute((trx) => batch.applyBatch(trx, items));
    // The same two again, as a redelivery would bring them.
    await ctx.db.transaction().execute((trx) => batch.applyBatch(trx, items));
    expect((await eventsFor(paid.partitionKey)).map((e) => e.event_type)).toEqual([
      'PaymentCompleted',
    ]);
    const [failed] = await eventsFor(declined.partitionKey);
    expect(failed?.event_type).toBe('PaymentFailed');
    expect(validate('PaymentFailed', failed?.payload)).toBeUndefined();
    const [completed] = await eventsFor(paid.partitionKey);
    expect(validate('PaymentCompleted', completed?.payload)).toBeUndefined();
    expect(await historyOf(paid.partitionKey)).toEqual([
      'OrderCreated:COMPLETED',
      'OrderCreated:UNCHANGED',
    ]);
    expect(await historyOf(declined.partitionKey)).toEqual([
      'OrderCreated:FAILED',
      'OrderCreated:UNCHANGED',
    ]);
  });
});

describe('OrderCancelled', () => {
  it('refunds a completed payment once', async () => {
    const created = orderCreated(700);
    await run(handleOrderCreated(simulatedGateway(rules)), created);
    const cancelled = inboxEvent(
      'OrderCancelled',
      { schemaVersion: 1, orderId: created.partitionKey, cancelledAt: new Date().toISOString() },
      created.partitionKey,
    );
    await run(handleOrderCancelled(), cancelled);
    await run(handleOrderCancelled(), cancelled);
    const payment = await ctx.db
      .selectFrom('payments')
      .selectAll()
      .where('order_id', '=', created.partitionKey)
      .executeTakeFirstOrThrow();
    expect(payment.status).toBe('REFUNDED');
    expect(payment.refunded_at).toBeInstanceOf(Date);
    const events = await eventsFor(created.partitionKey);
    expect(events.map((e) => e.event_type)).toEqual(['PaymentCompleted', 'PaymentRefunded']);
    expect(validate('PaymentRefunded', events[1]?.payload)).toBeUndefined();
    expect(await historyOf(created.partitionKey)).toEqual([
      'OrderCreated:COMPLETED',
      'OrderCancelled:REFUNDED',
      'OrderCancelled:UNCHANGED',
    ]);
  });

  it('does nothing for a failed payment', async () => {
    const created = orderCreated(99_999);
    await run(handleOrderCreated(simulatedGateway(rules)), created);
    const payload = {
      schemaVersion: 1,
      orderId: created.partitionKey,
      cancelledAt: new Date().toISOString(),
    };
    await run(handleOrderCancelled(), inboxEvent('OrderCancelled', payload, created.partitionKey));
    expect((await eventsFor(created.partitionKey)).map((e) => e.event_type)).toEqual([
      'PaymentFailed',
    ]);
  });
});
