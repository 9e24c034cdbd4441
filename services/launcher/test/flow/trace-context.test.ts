import { Writable } from 'node:stream';
import { pollUntil } from '@outbox-inbox/infra';
import { formatTraceparent, startTrace, traceOf } from '@outbox-inbox/outbox/trace';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';

/** Every JSON log line the services write, kept for the assertions. */
const logLines: Record<string, unknown>[] = [];
const captured = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  },
});

let system: InProcessSystem;
beforeAll(async () => {
  system = await startServicesInOneProcess({ logger: pino({ level: 'info' }, captured) });
});
afterAll(async () => system?.stop());

async function placeOrder(
  headers: Record<string, string>,
): Promise<{ id: string; traceresponse: string | null }> {
  const response = await fetch(`${system.orders.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ customerId: 'trace', amount: 1200, currency: 'EUR' }),
  });
  expect(response.status).toBe(201);
  const { id } = (await response.json()) as { id: string };
  return { id, traceresponse: response.headers.get('traceresponse') };
}

async function untilPaid(orderId: string): Promise<void> {
  await pollUntil(
    async () => {
      const order = await system.orderDb
        .selectFrom('orders')
        .select('status')
        .where('id', '=', orderId)
        .executeTakeFirst();
      return order?.status === 'PAID';
    },
    { timeoutMs: 60_000, description: `order ${orderId} PAID` },
  );
}

describe('one trace per order, across the asynchronous hops', () => {
  it('POST /orders → outbox → Kafka → payment inbox → payment outbox → order PAID: one trace id', async () => {
    const caller = startTrace();
    const { id, traceresponse } = await placeOrder({ traceparent: formatTraceparent(caller) });
    expect(traceresponse).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    await untilPaid(id);

    const orderCreated = await system.orderDb
      .selectFrom('outbox_event')
      .select('headers')
      .where('aggregate_id', '=', id)
      .executeTakeFirstOrThrow();
    const stored = await system.paymentDb
      .selectFrom('inbox_event')
      .select('headers')
      .where('aggregate_id', '=', id)
      .executeTakeFirstOrThrow();
    const paymentCompleted = await system.paymentDb
      .selectFrom('outbox_event')
      .select(['headers', 'event_type'])
      .where('partition_key', '=', id)
      .executeTakeFirstOrThrow();
    expect(paymentCompleted.event_type).toBe('PaymentCompleted');
    const hops = [orderCreated.headers, stored.headers, paymentCompleted.headers].map(traceOf);
    expect(hops.map((hop) => hop?.traceId)).toEqual([
      caller.traceId,
      caller.traceId,
      caller.traceId,
    ]);
    // The inbox keeps the hop it received; the answer is a new child span.
    expect(hops[1]?.spanId).toBe(hops[0]?.spanId);
    expect(new Set([caller.spanId, hops[0]?.spanId, hops[2]?.spanId]).size).toBe(3);

    const applied = await pollUntil(
      () => logLines.find((line) => line['orderId'] === id && line['status'] === 'PAID'),
      { timeoutMs: 10_000, description: 'the order consumer to log the payment it applied' },
    );
    expect(applied['traceId']).toBe(caller.traceId);
  });

  it('a request without traceparent starts a trace of its own, carried the same way', async () => {
    const first = await placeOrder({});
    const second = await placeOrder({ traceparent: 'not-a-traceparent' });
    const traceIdOf = (traceresponse: string | null) => traceresponse?.split('-')[1];
    expect(traceIdOf(first.traceresponse)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(second.traceresponse)).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(first.traceresponse)).not.toBe(traceIdOf(second.traceresponse));
    const row = await system.orderDb
      .selectFrom('outbox_event')
      .select('headers')
      .where('aggregate_id', '=', first.id)
      .executeTakeFirstOrThrow();
    expect(traceOf(row.headers)?.traceId).toBe(traceIdOf(first.traceresponse));
  });
});
