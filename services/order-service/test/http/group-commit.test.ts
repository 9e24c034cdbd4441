import { sql } from 'kysely';
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

const post = (payload: object, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/orders', payload, headers });

/** Transactions that wrote these orders (xmin is the id of the inserting transaction). */
async function transactionsOf(ids: readonly string[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(DISTINCT xmin::text) AS n FROM orders WHERE id = ANY(${ids}::uuid[])`.execute(
    ctx.db,
  );
  return Number(rows[0]?.n);
}

describe('POST /orders group commit', () => {
  it('writes concurrent requests in shared transactions, each order with its event and history', async () => {
    const before = await countRows(ctx.db);
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, n) => post({ ...validOrder, customerId: `group-${n}` })),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(24).fill(201));
    const ids = responses.map((r) => r.json<{ id: string; customerId: string }>());
    expect(ids.map((order) => order.customerId)).toEqual(
      Array.from({ length: 24 }, (_, n) => `group-${n}`),
    );
    // One transaction per request would be 24; two groups start at once, the rest wait for one.
    expect(await transactionsOf(ids.map((order) => order.id))).toBeLessThanOrEqual(8);
    expect(await countRows(ctx.db)).toEqual({
      orders: before.orders + 24,
      outbox: before.outbox + 24,
    });
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM order_history h JOIN outbox_event e ON e.event_id = h.event_id
       WHERE h.order_id = ANY(${ids.map((order) => order.id)}::uuid[])
         AND e.aggregate_id = h.order_id::text AND h.event_type = 'OrderCreated'`.execute(ctx.db);
    expect(Number(rows[0]?.n)).toBe(24);
  });

  it('replays each request of a failed group on its own: only the bad one fails', async () => {
    await sql`
      CREATE FUNCTION refuse_poison_customer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.customer_id = 'poison' THEN RAISE EXCEPTION 'refused by a trigger'; END IF;
        RETURN NEW;
      END $$`.execute(ctx.db);
    await sql`CREATE TRIGGER refuse_poison BEFORE INSERT ON orders
      FOR EACH ROW EXECUTE FUNCTION refuse_poison_customer()`.execute(ctx.db);
    try {
      const before = await countRows(ctx.db);
      const customers = ['ok-0', 'ok-1', 'ok-2', 'poison', 'ok-3', 'ok-4', 'ok-5', 'ok-6'];
      const responses = await Promise.all(
        customers.map((customerId) => post({ ...validOrder, customerId })),
      );
      expect(responses.map((r) => r.statusCode)).toEqual(
        customers.map((customerId) => (customerId === 'poison' ? 500 : 201)),
      );
      expect(await countRows(ctx.db)).toEqual({
        orders: before.orders + 7,
        outbox: before.outbox + 7,
      });
    } finally {
      await sql`DROP TRIGGER refuse_poison ON orders`.execute(ctx.db);
      await sql`DROP FUNCTION refuse_poison_customer()`.execute(ctx.db);
    }
  });

  it('keeps one order per Idempotency-Key when retries of one key arrive together with others', async () => {
    const before = await countRows(ctx.db);
    const responses = await Promise.all([
      ...Array.from({ length: 4 }, () =>
        post({ ...validOrder, customerId: 'keyed' }, { 'idempotency-key': 'group-key-1' }),
      ),
      ...Array.from({ length: 4 }, (_, n) => post({ ...validOrder, customerId: `unkeyed-${n}` })),
    ]);
    expect(responses.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const keyedIds = new Set(responses.slice(0, 4).map((r) => r.json<{ id: string }>().id));
    expect(keyedIds.size).toBe(1);
    expect(responses.slice(0, 4).filter((r) => r.headers['idempotent-replayed'])).toHaveLength(3);
    expect(await countRows(ctx.db)).toEqual({
      orders: before.orders + 5,
      outbox: before.outbox + 5,
    });
  });
});
