import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrderApiContext,
  validOrder,
  type OrderApiContext,
} from '../support/order-api-context.ts';

let ctx: OrderApiContext;
beforeAll(async () => {
  ctx = await createOrderApiContext();
});
afterAll(async () => ctx.close());

async function createOrder(customerId = 'c'): Promise<{ id: string }> {
  const response = await ctx.app.inject({
    method: 'POST',
    url: '/orders',
    payload: { ...validOrder, customerId },
  });
  expect(response.statusCode).toBe(201);
  return response.json();
}

describe('GET /orders/:id', () => {
  it('returns the order, 404 for an unknown id, 400 for a malformed id', async () => {
    const { id } = await createOrder();
    const found = await ctx.app.inject({ method: 'GET', url: `/orders/${id}` });
    expect(found.statusCode).toBe(200);
    expect(found.json()).toMatchObject({ id, status: 'PENDING' });

    const unknown = await ctx.app.inject({ method: 'GET', url: `/orders/${randomUUID()}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(unknown.json()).toMatchObject({ status: 404, title: 'Not Found' });

    const malformed = await ctx.app.inject({ method: 'GET', url: '/orders/not-a-uuid' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().errors).toEqual([
      expect.objectContaining({ field: 'id', in: 'params' }),
    ]);
  });

  it('shows the journey: each event the order emitted, with the state after it', async () => {
    const { id } = await createOrder();
    await ctx.app.inject({ method: 'POST', url: `/orders/${id}/cancel` });
    const found = await ctx.app.inject({ method: 'GET', url: `/orders/${id}` });
    const emitted = await ctx.db
      .selectFrom('outbox_event')
      .select(['event_id', 'event_type'])
      .where('partition_key', '=', id)
      .orderBy('id')
      .execute();
    expect(found.json().journey).toEqual(
      emitted.map((event, n) => ({
        eventId: event.event_id,
        eventType: event.event_type,
        status: n === 0 ? 'PENDING' : 'CANCELLED',
        paymentStatus: null,
        at: expect.any(String),
      })),
    );
    expect(emitted.map((event) => event.event_type)).toEqual(['OrderCreated', 'OrderCancelled']);
  });

  it('answers unknown routes with a problem+json 404', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ status: 404, detail: 'no route GET /nothing-here' });
  });
});

describe('POST /orders/:id/cancel', () => {
  it('cancels once: a second cancel is harmless and emits nothing', async () => {
    const { id } = await createOrder();
    const first = await ctx.app.inject({ method: 'POST', url: `/orders/${id}/cancel` });
    const second = await ctx.app.inject({ method: 'POST', url: `/orders/${id}/cancel` });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ id, status: 'CANCELLED' });
    const events = await ctx.db
      .selectFrom('outbox_event')
      .select('event_type')
      .where('aggregate_id', '=', id)
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.event_type)).toEqual(['OrderCreated', 'OrderCancelled']);
  });

  it('answers 404 for an unknown order and writes nothing', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: `/orders/${randomUUID()}/cancel`,
    });
    expect(response.statusCode).toBe(404);
  });
});

describe('GET /orders', () => {
  it('pages newest first with a cursor, without gaps or repeats', async () => {
    const customer = `pager-${randomUUID()}`;
    const created: string[] = [];
    for (let i = 0; i < 7; i++) created.push((await createOrder(customer)).id);
    // Cancel one so the status filter has something to select.
    await ctx.app.inject({ method: 'POST', url: `/orders/${created[2]}/cancel` });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/orders?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await ctx.app.inject({ method: 'GET', url });
      expect(page.statusCode).toBe(200);
      const body: { items: { id: string; customerId: string }[]; nextCursor: string | null } =
        page.json();
      expect(body.items.length).toBeLessThanOrEqual(3);
      seen.push(...body.items.filter((o) => o.customerId === customer).map((o) => o.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(cursor).toBeNull();
    expect(seen).toEqual([...created].reverse());

    const cancelled = await ctx.app.inject({
      method: 'GET',
      url: '/orders?status=CANCELLED&limit=100',
    });
    expect(cancelled.json().items.map((o: { id: string }) => o.id)).toContain(created[2]);
    expect(cancelled.json().items.every((o: { status: string }) => o.status === 'CANCELLED')).toBe(
      true,
    );
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['status=SHIPPED', 'status'],
    ['cursor=bm90LWEtbnVtYmVy', 'cursor'],
    ['color=red', 'color'],
  ])('refuses ?%s with a 400 naming %s', async (query, field) => {
    const response = await ctx.app.inject({ method: 'GET', url: `/orders?${query}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field })]),
    );
  });
});
