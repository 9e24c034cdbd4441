import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicatesAbsorbed, readLatestOrders, type JourneyStep } from './latest-orders.ts';

const created = '0190f5e4-0000-7000-8000-0000000000c1';
const paid = '0190f5e4-0000-7000-8000-0000000000a1';
const secondOrderCreated = '0190f5e4-0000-7000-8000-0000000000c2';

function step(eventId: string, eventType: string, status: string): JourneyStep {
  return { eventId, eventType, status, paymentStatus: null, at: '2026-01-01T00:00:00.000Z' };
}

describe('duplicatesAbsorbed', () => {
  it("sums the redeliveries of the order's events, and only of its events", () => {
    const counts = new Map([
      [created, 2], // payment-service's inbox dropped two copies of OrderCreated
      [paid, 1], // order-service's processed_event dropped one copy of PaymentSucceeded
      ['0190f5e4-0000-7000-8000-00000000ffff', 7], // another order's event
    ]);
    const journey = [
      step(created, 'OrderCreated', 'PENDING'),
      step(paid, 'PaymentSucceeded', 'PAID'),
    ];
    expect(duplicatesAbsorbed({ journey }, counts)).toBe(3);
  });

  it('counts an event once when the journey shows it twice, whatever the case of its id', () => {
    const journey = [
      step(created.toUpperCase(), 'OrderCreated', 'PENDING'),
      step(paid, 'PaymentSucceeded', 'PAID'),
      step(paid, 'PaymentSucceeded', 'PAID'),
    ];
    expect(
      duplicatesAbsorbed(
        { journey },
        new Map([
          [created, 1],
          [paid, 4],
        ]),
      ),
    ).toBe(5);
  });

  it('is 0 for an order none of whose events was delivered twice', () => {
    expect(
      duplicatesAbsorbed({ journey: [step(created, 'OrderCreated', 'PENDING')] }, new Map()),
    ).toBe(0);
  });
});

describe('readLatestOrders', () => {
  // order-service's API as the dashboard sees it: two orders, the newest first.
  const orders = {
    'order-1': [step(created, 'OrderCreated', 'PENDING'), step(paid, 'PaymentSucceeded', 'PAID')],
    'order-2': [step(secondOrderCreated, 'OrderCreated', 'PENDING')],
  };
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const id = request.url?.replace('/orders/', '') ?? '';
      const body = request.url?.startsWith('/orders?')
        ? { items: Object.keys(orders).map((key) => ({ id: key })) }
        : {
            id,
            amount: 100,
            currency: 'EUR',
            status: 'PAID',
            createdAt: '2026-01-01T00:00:00.000Z',
            journey: orders[id as keyof typeof orders],
          };
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("asks once for every order's events and gives each order its own sum", async () => {
    const asked: string[][] = [];
    const latest = await readLatestOrders(
      {
        orderApiUrl: url,
        redeliveries: async (eventIds) => {
          asked.push([...eventIds]);
          return new Map([
            [paid, 2],
            [secondOrderCreated, 1],
          ]);
        },
      },
      8,
      5000,
    );
    expect(asked).toEqual([[created, paid, secondOrderCreated]]);
    expect(latest.map((o) => [o.id, o.duplicatesAbsorbed])).toEqual([
      ['order-1', 2],
      ['order-2', 1],
    ]);
  });
});
