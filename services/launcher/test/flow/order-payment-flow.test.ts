import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';

let system: InProcessSystem;
beforeAll(async () => {
  system = await startServicesInOneProcess();
});
afterAll(async () => system?.stop());

interface Planned {
  readonly amount: number;
  readonly cancel: boolean;
}

async function post(path: string, body?: unknown): Promise<{ id: string; status: string }> {
  const response = await fetch(`${system.orders.url}${path}`, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as { id: string; status: string };
}

describe('order → payment → order status, over real PostgreSQL and Kafka', () => {
  it('settles 200 orders: paid, declined, cancelled and refunded; one payment each', async () => {
    const limit = system.paymentAmountLimit;
    // Every 10th order is above the payment limit (declined); every 7th is cancelled at once,
    // so its OrderCancelled follows its OrderCreated on the same key.
    const plan: Planned[] = Array.from({ length: 200 }, (_, i) => ({
      amount: i % 10 === 0 ? limit + 1 + i : 100 + i,
      cancel: i % 7 === 0,
    }));
    const ids: string[] = [];
    for (let start = 0; start < plan.length; start += 20) {
      const chunk = plan.slice(start, start + 20);
      const created = await Promise.all(
        chunk.map(async (p, j) => {
          const order = await post('/orders', {
            customerId: `flow-${start + j}`,
            amount: p.amount,
            currency: 'EUR',
          });
          if (p.cancel) await post(`/orders/${order.id}/cancel`);
          return order.id;
        }),
      );
      ids.push(...created);
    }

    const settled = await pollUntil(
      async () => {
        const rows = await system.orderDb
          .selectFrom('orders')
          .select(['id', 'status', 'payment_status'])
          .where('id', 'in', ids)
          .where((eb) =>
            eb.or([
              eb('status', 'in', ['PAID', 'PAYMENT_FAILED']),
              eb.and([
                eb('status', '=', 'CANCELLED'),
                eb('payment_status', 'in', ['FAILED', 'REFUNDED']),
              ]),
            ]),
          )
          .execute();
        return rows.length === ids.length ? rows : undefined;
      },
      {
        timeoutMs: 150_000,
        intervalMs: 500,
        description: 'all 200 orders to reach their final status',
      },
    );

    const byId = new Map(settled.map((row) => [row.id, row]));
    plan.forEach((p, i) => {
      const declined = p.amount > limit;
      const expected = p.cancel
        ? { status: 'CANCELLED', payment_status: declined ? 'FAILED' : 'REFUNDED' }
        : {
            status: declined ? 'PAYMENT_FAILED' : 'PAID',
            payment_status: declined ? 'FAILED' : 'PAID',
          };
      expect(byId.get(ids[i] ?? ''), `order ${i}`).toMatchObject(expected);
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
