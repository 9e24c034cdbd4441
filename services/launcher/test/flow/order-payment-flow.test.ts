import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';
import {
  finalStateOf,
  planOrders,
  postToOrders,
  waitUntilOrdersFinal,
} from '../support/order-plan.ts';

let system: InProcessSystem;
beforeAll(async () => {
  system = await startServicesInOneProcess();
});
afterAll(async () => system?.stop());

describe('order → payment → order status, over real PostgreSQL and Kafka', () => {
  it('settles 200 orders: paid, declined, cancelled and refunded; one payment each', async () => {
    const limit = system.paymentAmountLimit;
    const plan = planOrders(200, limit);
    const ids: string[] = [];
    for (let start = 0; start < plan.length; start += 20) {
      const chunk = plan.slice(start, start + 20);
      const created = await Promise.all(
        chunk.map(async (p, j) => {
          const order = await postToOrders(system, '/orders', {
            customerId: `flow-${start + j}`,
            amount: p.amount,
            currency: 'EUR',
          });
          if (p.cancel) await postToOrders(system, `/orders/${order.id}/cancel`);
          return order.id;
        }),
      );
      ids.push(...created);
    }

    const settled = await waitUntilOrdersFinal(system, ids, 150_000);
    const byId = new Map(settled.map((row) => [row.id, row]));
    plan.forEach((p, i) => {
      expect(byId.get(ids[i] ?? ''), `order ${i}`).toMatchObject(finalStateOf(p, limit));
    });

    const payments = await system.paymentDb
      .selectFrom('payments')
      .select(['order_id', 'status'])
      .where('order_id', 'in', ids)
      .execute();
    expect(payments).toHaveLength(ids.length);
    expect(new Set(payments.map((p) => p.order_id)).size).toBe(ids.length);
    const refunds = plan.filter((p) => p.cancel && p.amount <= limit).length;
    expect(payments.filter((p) => p.status === 'REFUNDED')).toHaveLength(refunds);

    const refundEvents = await system.paymentDb
      .selectFrom('outbox_event')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('event_type', '=', 'PaymentRefunded')
      // Other test files share this database: count only this test's orders.
      .where('partition_key', 'in', ids)
      .executeTakeFirstOrThrow();
    expect(Number(refundEvents.n)).toBe(refunds);

    // Nothing was parked or left dead on the way.
    const dead = await sql<{
      n: string;
    }>`SELECT count(*) AS n FROM inbox_event WHERE dead_at IS NOT NULL`.execute(system.paymentDb);
    expect(Number(dead.rows[0]?.n)).toBe(0);
    for (const db of [system.orderDb, system.paymentDb] as const) {
      const parked = await sql<{ n: string }>`SELECT count(*) AS n FROM parked_message`.execute(db);
      expect(Number(parked.rows[0]?.n)).toBe(0);
    }
  });
});
