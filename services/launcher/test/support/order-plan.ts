import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import type { InProcessSystem } from './services-in-one-process.ts';

/** One order of a flow test: its amount, and whether it is cancelled right after it is created. */
export interface PlannedOrder {
  readonly amount: number;
  readonly cancel: boolean;
}

/**
 * `count` orders: every 10th above the payment limit (declined), every 7th cancelled at once, so
 * its OrderCancelled follows its OrderCreated on the same key.
 */
export function planOrders(count: number, paymentLimit: number): PlannedOrder[] {
  return Array.from({ length: count }, (_, i) => ({
    amount: i % 10 === 0 ? paymentLimit + 1 + i : 100 + i,
    cancel: i % 7 === 0,
  }));
}

/** The status and payment status a planned order must end in. */
export function finalStateOf(
  order: PlannedOrder,
  paymentLimit: number,
): { status: string; payment_status: string } {
  const declined = order.amount > paymentLimit;
  if (order.cancel)
    return { status: 'CANCELLED', payment_status: declined ? 'FAILED' : 'REFUNDED' };
  return {
    status: declined ? 'PAYMENT_FAILED' : 'PAID',
    payment_status: declined ? 'FAILED' : 'PAID',
  };
}

/** Polls until every order of `ids` is in a final state; returns their rows. */
export function waitUntilOrdersFinal(
  system: InProcessSystem,
  ids: readonly string[],
  timeoutMs: number,
): Promise<{ id: string; status: string; payment_status: string | null }[]> {
  return pollUntil(
    async () => {
      const rows = await system.orderDb
        .selectFrom('orders')
        .select(['id', 'status', 'payment_status'])
        .where('id', 'in', [...ids])
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
      timeoutMs,
      intervalMs: 500,
      description: `all ${ids.length} orders to reach their final status`,
    },
  );
}

/** POSTs to order-service's API (JSON body when given); a 2xx answer is required. */
export async function postToOrders(
  system: InProcessSystem,
  path: string,
  body?: unknown,
): Promise<{ id: string; status: string }> {
  const response = await fetch(`${system.orders.url}${path}`, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as { id: string; status: string };
}
