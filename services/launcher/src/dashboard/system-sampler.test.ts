import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from '@outbox-inbox/infra';
import { afterEach, expect, it } from 'vitest';
import { startSampler, type DashboardState } from './system-sampler.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An order api with one order, counting the requests it gets. */
async function orderApi(): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests++;
    response.setHeader('content-type', 'application/json');
    const id = 'a3c1f0de-0000-4000-8000-000000000001';
    const body = request.url?.startsWith('/orders?')
      ? { items: [{ id }] }
      : { id, status: 'PAID', journey: [] };
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

it('reads the newest orders only while a page watches; the charts are sampled either way', async () => {
  const api = await orderApi();
  let watched = false;
  const states: DashboardState[] = [];
  const sampler = startSampler(
    {
      stack: { status: () => [] },
      orderApiUrl: api.url,
      redeliveries: async () => new Map(),
      relayMode: 'polling',
      intervalMs: 20,
      idleIntervalMs: 20,
      watched: () => watched,
    },
    (state) => states.push(state),
  );
  cleanups.push(() => sampler.stop());
  await pollUntil(() => states.length >= 5, { timeoutMs: 10_000, description: 'five rounds' });
  expect(api.requests(), 'order api requests with no page open').toBe(0);
  expect(states.at(-1)?.history.length).toBeGreaterThanOrEqual(5);

  watched = true;
  sampler.wake();
  const orders = await pollUntil(() => states.at(-1)?.orders.length === 1 && states.at(-1), {
    timeoutMs: 10_000,
    description: 'the newest orders once a page watches',
  });
  expect(orders.orders[0]?.status).toBe('PAID');
  expect(api.requests()).toBeGreaterThanOrEqual(2);
});
