import { randomUUID } from 'node:crypto';
import type { InboxEvent } from '@outbox-inbox/outbox';
import { pollUntil } from '@outbox-inbox/infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleOrderCreated, simulatedGateway } from '../../src/index.ts';
import {
  createPaymentTestContext,
  type PaymentTestContext,
} from '../support/payment-test-context.ts';

let ctx: PaymentTestContext;
let orderId: string;
beforeAll(async () => {
  ctx = await createPaymentTestContext();
  orderId = randomUUID();
  const event: InboxEvent = {
    eventId: randomUUID(),
    eventType: 'OrderCreated',
    aggregateType: 'order',
    aggregateId: orderId,
    partitionKey: orderId,
    payload: {
      schemaVersion: 1,
      orderId,
      customerId: 'c-9',
      amount: 990,
      currency: 'USD',
      createdAt: new Date().toISOString(),
    },
    occurredAt: new Date(),
    topic: 'order.events',
    partition: 0,
    offset: '0',
    headers: {},
    receivedAt: new Date(),
    attempts: 0,
  };
  const handler = handleOrderCreated(simulatedGateway({ amountLimit: 1000, latencyMs: 0 }));
  const decision = await handler.call(event, new AbortController().signal);
  await ctx.db.transaction().execute((trx) => handler.apply(trx, event, decision));
});
afterAll(async () => {
  if (!ctx.stack.isRunning('postgres')) await ctx.stack.start('postgres');
  await ctx.close();
});

describe('payment API', () => {
  it('finds payments by order and by id', async () => {
    const list = await ctx.app.inject({ method: 'GET', url: `/payments?orderId=${orderId}` });
    expect(list.statusCode).toBe(200);
    const [payment] = list.json().items;
    expect(payment).toMatchObject({
      orderId,
      amount: 990,
      currency: 'USD',
      status: 'COMPLETED',
      refundedAt: null,
    });
    const byId = await ctx.app.inject({ method: 'GET', url: `/payments/${payment.id}` });
    expect(byId.json()).toEqual(payment);
    const none = await ctx.app.inject({ method: 'GET', url: `/payments?orderId=${randomUUID()}` });
    expect(none.json()).toEqual({ items: [] });
  });

  it('answers 404 and 400 as problem+json', async () => {
    const unknown = await ctx.app.inject({ method: 'GET', url: `/payments/${randomUUID()}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
    const malformed = await ctx.app.inject({ method: 'GET', url: '/payments?orderId=42' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().errors).toEqual([
      expect.objectContaining({ field: 'orderId', in: 'querystring' }),
    ]);
    const writes = await ctx.app.inject({ method: 'POST', url: '/payments', payload: {} });
    expect(writes.statusCode).toBe(404);
  });

  it('answers 503 while PostgreSQL is down and is ready again after', async () => {
    await ctx.stack.kill('postgres');
    const read = await ctx.app.inject({ method: 'GET', url: `/payments?orderId=${orderId}` });
    expect(read.statusCode).toBe(503);
    expect(read.json()).toMatchObject({
      status: 503,
      detail: 'the database is not reachable; retry later',
    });
    expect((await ctx.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
    await ctx.stack.start('postgres');
    await pollUntil(
      async () =>
        (await ctx.app.inject({ method: 'GET', url: '/health/ready' })).statusCode === 200,
      {
        timeoutMs: 30_000,
        description: 'readiness after PostgreSQL restarts',
      },
    );
    const metrics = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^inbox_backlog_events \d+/m);
  });
});
