import { setTimeout as sleep } from 'node:timers/promises';

export interface OrderSnapshot {
  readonly id: string;
  readonly amount: number;
  readonly currency: string;
  readonly status: string;
  readonly paymentStatus: string | null;
  readonly failureReason: string | null;
}

export interface JourneyStep {
  readonly label: string;
  readonly afterMs: number;
}

/** An order is settled when its money is: paid, declined, or (cancelled) declined or refunded. */
export function isSettled(order: OrderSnapshot): boolean {
  if (order.status === 'PAID' || order.status === 'PAYMENT_FAILED') return true;
  return (
    order.status === 'CANCELLED' &&
    (order.paymentStatus === 'FAILED' || order.paymentStatus === 'REFUNDED')
  );
}

export function stepLabel(order: OrderSnapshot): string {
  if (order.status !== 'CANCELLED' || order.paymentStatus === null) return order.status;
  return `CANCELLED (payment ${order.paymentStatus})`;
}

/**
 * Polls an order and records each status it passes through, until `done` holds or the
 * deadline passes. Polling can miss a state that lasts less than one interval; the demo only
 * shows what a client would have seen.
 */
export async function watchOrder(
  fetchOrder: () => Promise<OrderSnapshot>,
  options: {
    done: (order: OrderSnapshot) => boolean;
    steps: JourneyStep[];
    startedAt: number;
    timeoutMs: number;
  },
): Promise<OrderSnapshot> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const order = await fetchOrder();
    const label = stepLabel(order);
    if (options.steps.at(-1)?.label !== label)
      options.steps.push({ label, afterMs: Date.now() - options.startedAt });
    if (options.done(order)) return order;
    if (Date.now() > deadline)
      throw new Error(`order ${order.id} is still ${label} after ${options.timeoutMs} ms`);
    await sleep(50);
  }
}
