import { validate } from '@outbox-inbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  countRows,
  createOrderApiContext,
  validOrder,
  type OrderApiContext,
} from '../support/order-api-context.ts';

let ctx: OrderApiContext;
beforeAll(async () => {
  ctx = await createOrderApiContext();
});
afterAll(async () => ctx.close());

describe('POST /orders', () => {
  it('creates a PENDING order and its OrderCreated outbox row', async () => {
    const response = await ctx.app.inject({ method: 'POST', url: '/orders', payload: validOrder });
    expect(response.statusCode).toBe(201);
    expect(response.headers['x-request-id']).toBeTruthy();
    const order = response.json();
    expect(order).toMatchObject({ ...validOrder, status: 'PENDING', paymentStatus: null });

    const event = await ctx.db
      .selectFrom('outbox_event')
      .selectAll()
      .where('aggregate_id', '=', order.id)
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      event_type: 'OrderCreated',
      aggregate_type: 'order',
      topic: 'order.events',
      partition_key: order.id,
      published_at: null,
    });
    expect(validate('OrderCreated', event.payload)).toBeUndefined();
  });

  it.each([
    ['amount as a string', { ...validOrder, amount: '4200' }, 'amount'],
    ['a fractional amount', { ...validOrder, amount: 42.5 }, 'amount'],
    ['a zero amount', { ...validOrder, amount: 0 }, 'amount'],
    ['a lower-case currency', { ...validOrder, currency: 'eur' }, 'currency'],
    ['no customerId', { amount: 1, currency: 'EUR' }, 'customerId'],
    ['an unknown field', { ...validOrder, discount: 5 }, 'discount'],
    // Text PostgreSQL cannot store: refused (it used to be a 500), or silently altered.
    ['a NUL in customerId', { ...validOrder, customerId: 'a\u0000b' }, 'customerId'],
    ['a lone surrogate in customerId', { ...validOrder, customerId: 'c\ud800' }, 'customerId'],
  ])(
    'refuses %s with a 400 naming the field, and writes nothing',
    async (_name, payload, field) => {
      const before = await countRows(ctx.db);
      const response = await ctx.app.inject({ method: 'POST', url: '/orders', payload });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = response.json();
      expect(problem).toMatchObject({ status: 400, title: 'Bad Request' });
      expect(problem.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field, in: 'body' })]),
      );
      expect(problem.detail).toContain(field);
      expect(await countRows(ctx.db)).toEqual(before);
    },
  );

  it('refuses bodies that are not JSON, broken JSON, and bodies over the limit', async () => {
    const before = await countRows(ctx.db);
    const text = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'content-type': 'text/plain' },
      payload: 'amount=5',
    });
    expect(text.statusCode).toBe(415);
    expect(text.headers['content-type']).toMatch(/^application\/problem\+json/);

    const broken = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      headers: { 'content-type': 'application/json' },
      payload: '{"customerId": "c",',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ status: 400 });

    const large = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      payload: { ...validOrder, customerId: 'x'.repeat(5000) },
    });
    expect(large.statusCode).toBe(413);
    expect(await countRows(ctx.db)).toEqual(before);
  });
});

describe('Idempotency-Key', () => {
  it('returns the first response to a retry and creates nothing more', async () => {
    const before = await countRows(ctx.db);
    const send = () =>
      ctx.app.inject({
        method: 'POST',
        url: '/orders',
        headers: { 'idempotency-key': 'retry-1' },
        payload: validOrder,
      });
    const first = await send();
    const retry = await send();
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(await countRows(ctx.db)).toEqual({
      orders: before.orders + 1,
      outbox: before.outbox + 1,
    });
  });

  it('claims a key once under concurrent retries', async () => {
    const before = await countRows(ctx.db);
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        ctx.app.inject({
          method: 'POST',
          url: '/orders',
          headers: { 'idempotency-key': 'race-1' },
          payload: validOrder,
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(responses.map((r) => r.json().id)).size).toBe(1);
    expect(await countRows(ctx.db)).toEqual({
      orders: before.orders + 1,
      outbox: before.outbox + 1,
    });
  });

  it('refuses the same key with a different body (422) and writes nothing', async () => {
    const headers = { 'idempotency-key': 'reuse-1' };
    expect(
      (await ctx.app.inject({ method: 'POST', url: '/orders', headers, payload: validOrder }))
        .statusCode,
    ).toBe(201);
    const before = await countRows(ctx.db);
    const reused = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      headers,
      payload: { ...validOrder, amount: 1 },
    });
    expect(reused.statusCode).toBe(422);
    expect(reused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(reused.json().detail).toMatch(/Idempotency-Key/);
    expect(await countRows(ctx.db)).toEqual(before);
  });

  it('treats the same body sent with keys in another order as the same request', async () => {
    const headers = { 'idempotency-key': 'order-of-keys' };
    const first = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      headers,
      payload: validOrder,
    });
    const reordered = await ctx.app.inject({
      method: 'POST',
      url: '/orders',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ currency: 'EUR', amount: 4200, customerId: 'customer-1' }),
    });
    expect(reordered.statusCode).toBe(201);
    expect(reordered.json().id).toBe(first.json().id);
  });
});
