#!/usr/bin/env node
/**
 * `pnpm demo`: against a running system (`pnpm dev` in another shell), creates a handful of
 * orders (three paid, one declined, one cancelled after payment) and prints each order's
 * journey to its final status. `STACK_NAME` picks another running stack's services (the docs
 * test's); `ORDER_API_URL` / `PAYMENT_API_URL` name them directly.
 */
import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
import {
  isSettled,
  watchOrder,
  type JourneyStep,
  type OrderSnapshot,
} from './demo/order-journey.ts';

/** A role's URL in the stack named by STACK_NAME, when one is named (the docs test's stack). */
function stackUrl(component: string): string | undefined {
  const name = process.env['STACK_NAME'];
  if (name === undefined) return undefined;
  return Stack.openIfExists(name)?.state.components[component]?.endpoints['url'];
}

const orderApi = process.env['ORDER_API_URL'] ?? stackUrl('order-api') ?? 'http://127.0.0.1:3001';
const paymentApi =
  process.env['PAYMENT_API_URL'] ?? stackUrl('payment-api') ?? 'http://127.0.0.1:3002';
const timeoutMs = 60_000;

interface Scenario {
  readonly label: string;
  readonly amount: number;
  readonly cancelAfterPayment?: boolean;
}

// The default payment limit is 100000 minor units: 250000 is declined.
const scenarios: readonly Scenario[] = [
  { label: 'paid', amount: 1999 },
  { label: 'paid', amount: 4500 },
  { label: 'paid', amount: 12_000 },
  { label: 'declined', amount: 250_000 },
  { label: 'cancelled', amount: 3000, cancelAfterPayment: true },
];

async function request<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const body: unknown = await response.json();
  if (!response.ok)
    throw new Error(
      `${init?.method ?? 'GET'} ${url} → ${response.status}: ${JSON.stringify(body)}`,
    );
  return body as T;
}

async function run(scenario: Scenario, index: number): Promise<string> {
  const startedAt = Date.now();
  const created = await request<OrderSnapshot>(`${orderApi}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      customerId: `demo-${index + 1}`,
      amount: scenario.amount,
      currency: 'EUR',
    }),
  });
  const steps: JourneyStep[] = [];
  const fetchOrder = () => request<OrderSnapshot>(`${orderApi}/orders/${created.id}`);
  let order = await watchOrder(fetchOrder, {
    done: (o) => (scenario.cancelAfterPayment ? o.status !== 'PENDING' : isSettled(o)),
    steps,
    startedAt,
    timeoutMs,
  });
  if (scenario.cancelAfterPayment) {
    await request(`${orderApi}/orders/${created.id}/cancel`, { method: 'POST' });
    order = await watchOrder(fetchOrder, { done: isSettled, steps, startedAt, timeoutMs });
  }
  const payments = await request<{ items: { id: string; status: string }[] }>(
    `${paymentApi}/payments?orderId=${created.id}`,
  );
  const journey = steps.map((s) => `${s.label} (${(s.afterMs / 1000).toFixed(2)} s)`).join(' → ');
  const money = `${(order.amount / 100).toFixed(2)} ${order.currency}`.padStart(12);
  const payment =
    payments.items.map((p) => `payment ${p.id.slice(0, 8)} ${p.status}`).join(', ') || 'no payment';
  const reason = order.failureReason ? `\n     reason: ${order.failureReason}` : '';
  return `${index + 1}. ${scenario.label.padEnd(9)} ${money}  order ${order.id}\n     ${journey}\n     ${payment}${reason}`;
}

try {
  await request(`${orderApi}/health/ready`);
  await request(`${paymentApi}/health/ready`);
} catch {
  console.error(`error: the services are not answering at ${orderApi} and ${paymentApi}`);
  console.error(
    '  fix: start the system first with `pnpm dev` (in another shell), then run `pnpm demo`',
  );
  process.exit(1);
}

console.log(`Creating ${scenarios.length} orders at ${orderApi} …\n`);
const results = await Promise.allSettled(scenarios.map(run));
let failed = 0;
for (const result of results) {
  if (result.status === 'fulfilled') console.log(`${result.value}\n`);
  else {
    failed++;
    console.log(
      `✗ ${result.reason instanceof Error ? result.reason.message : String(result.reason)}\n`,
    );
  }
}
console.log(
  failed === 0
    ? 'Every order reached its final status.'
    : `${failed} order(s) did not settle in time.`,
);
process.exitCode = failed === 0 ? 0 : 1;
