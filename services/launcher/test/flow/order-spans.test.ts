import { SpanKind } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';
import { topics } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { EVENT_HEADERS } from '@outbox-inbox/outbox/kafka-port';
import { formatTraceparent, startTrace, traceOf } from '@outbox-inbox/outbox/trace';
import { registerTracing, type Stoppable } from '@outbox-inbox/service-kit';
import type { Selectable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startServicesInOneProcess,
  type InProcessSystem,
} from '../support/services-in-one-process.ts';

const exporter = new InMemorySpanExporter();
let tracing: Stoppable | undefined;
let system: InProcessSystem;
beforeAll(async () => {
  tracing = registerTracing({
    serviceName: 'flow-test',
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  // The topics are shared with the other flow test files, so this system's inbox also stores
  // the orders they post at the same time. A claim of one row keeps each handler's write in its
  // own event's trace; a batch's write belongs to no single one (handle-claimed-rows.ts), and a
  // batch with another file's order made the handler's enqueue a child of no handle span.
  system = await startServicesInOneProcess({ processorBatchSize: 1 });
});
afterAll(async () => {
  await system?.stop();
  await tracing?.stop();
});

/** The finished span named `name` about event `eventId` (any span named so without one). */
function spansOf(name: string, eventId?: string): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter(
      (span) =>
        span.name === name &&
        (eventId === undefined || span.attributes['messaging.message.id'] === eventId),
    );
}

async function oneSpan(name: string, eventId?: string): Promise<ReadableSpan> {
  return pollUntil(() => spansOf(name, eventId)[0], {
    timeoutMs: 30_000,
    description: `span "${name}"${eventId ? ` of event ${eventId}` : ''}`,
  });
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const startOf = (span: ReadableSpan) => span.startTime[0] * 1e9 + span.startTime[1];

/** An event's outbox row as the relay sent it: the same key, value and headers. */
async function resend(topic: string, row: Selectable<OutboxTables['outbox_event']>): Promise<void> {
  const producer = system.kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: [
        {
          key: row.partition_key,
          value: JSON.stringify(row.payload),
          headers: {
            ...row.headers,
            [EVENT_HEADERS.eventId]: row.event_id,
            [EVENT_HEADERS.eventType]: row.event_type,
            [EVENT_HEADERS.aggregateType]: row.aggregate_type,
            [EVENT_HEADERS.aggregateId]: row.aggregate_id,
            [EVENT_HEADERS.occurredAt]: row.created_at.toISOString(),
          },
        },
      ],
    });
  } finally {
    await producer.disconnect();
  }
}

describe('OpenTelemetry spans of one order, with a tracer provider registered', () => {
  it('POST /orders → enqueue → publish → inbox store → handler → enqueue → publish → order-status apply: one trace, each hop a child of the one that caused it', async () => {
    const caller = startTrace();
    const response = await fetch(`${system.orders.url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: formatTraceparent(caller),
        tracestate: 'vendor=order-spans',
      },
      body: JSON.stringify({ customerId: 'spans', amount: 1500, currency: 'EUR' }),
    });
    expect(response.status).toBe(201);
    const { id: orderId } = (await response.json()) as { id: string };
    await pollUntil(
      async () =>
        (
          await system.orderDb
            .selectFrom('orders')
            .select('status')
            .where('id', '=', orderId)
            .executeTakeFirst()
        )?.status === 'PAID',
      { timeoutMs: 60_000, description: `order ${orderId} PAID` },
    );
    const orderRow = await system.orderDb
      .selectFrom('outbox_event')
      .selectAll()
      .where('aggregate_id', '=', orderId)
      .executeTakeFirstOrThrow();
    const paymentRow = await system.paymentDb
      .selectFrom('outbox_event')
      .selectAll()
      .where('partition_key', '=', orderId)
      .executeTakeFirstOrThrow();
    expect(paymentRow.event_type).toBe('PaymentCompleted');

    const server = pollUntil(
      () => spansOf('POST /orders').find((span) => span.spanContext().traceId === caller.traceId),
      { timeoutMs: 10_000, description: 'the server span of POST /orders' },
    );
    const chain = {
      server: await server,
      enqueueOrder: await oneSpan(`enqueue ${topics.orderEvents}`, orderRow.event_id),
      publishOrder: await oneSpan(`publish ${topics.orderEvents}`, orderRow.event_id),
      storeOrder: await oneSpan(`store ${topics.orderEvents}`, orderRow.event_id),
      handleOrder: await oneSpan(`handle ${topics.orderEvents}`, orderRow.event_id),
      enqueuePayment: await oneSpan(`enqueue ${topics.paymentEvents}`, paymentRow.event_id),
      publishPayment: await oneSpan(`publish ${topics.paymentEvents}`, paymentRow.event_id),
      applyPayment: await oneSpan(`apply ${topics.paymentEvents}`, paymentRow.event_id),
    };
    const spans = Object.values(chain);
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(
      new Set([caller.traceId]),
    );
    // Started in the order of the journey.
    expect(spans.map(startOf)).toEqual(spans.map(startOf).toSorted((a, b) => a - b));

    expect(chain.server.kind).toBe(SpanKind.SERVER);
    expect(parentOf(chain.server)).toBe(caller.spanId);
    expect(response.headers.get('traceresponse')).toBe(
      `00-${caller.traceId}-${idOf(chain.server)}-01`,
    );
    expect(parentOf(chain.enqueueOrder)).toBe(idOf(chain.server));
    // The row carries the enqueue span: every later hop of this event continues it.
    expect(traceOf(orderRow.headers)?.spanId).toBe(idOf(chain.enqueueOrder));
    // The caller's vendor data travels with both events.
    expect(traceOf(orderRow.headers)?.tracestate).toBe('vendor=order-spans');
    expect(traceOf(paymentRow.headers)?.tracestate).toBe('vendor=order-spans');
    expect(parentOf(chain.publishOrder)).toBe(idOf(chain.enqueueOrder));
    expect(parentOf(chain.storeOrder)).toBe(idOf(chain.enqueueOrder));
    expect(parentOf(chain.handleOrder)).toBe(idOf(chain.enqueueOrder));
    expect(parentOf(chain.enqueuePayment)).toBe(idOf(chain.handleOrder));
    expect(parentOf(chain.publishPayment)).toBe(idOf(chain.enqueuePayment));
    expect(parentOf(chain.applyPayment)).toBe(idOf(chain.enqueuePayment));

    expect(chain.storeOrder.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.destination.name': topics.orderEvents,
      'messaging.message.id': orderRow.event_id,
      'messaging.operation.type': 'process',
    });
    expect(chain.storeOrder.attributes['messaging.outbox.duplicate']).toBeUndefined();
    expect(chain.applyPayment.attributes['messaging.outbox.duplicate']).toBeUndefined();

    // The same messages again, as a producer retry or a replay would send them: each receiver
    // drops its repeat, and the trace shows the drop.
    await resend(topics.orderEvents, orderRow);
    await resend(topics.paymentEvents, paymentRow);
    for (const [name, eventId] of [
      [`store ${topics.orderEvents}`, orderRow.event_id],
      [`apply ${topics.paymentEvents}`, paymentRow.event_id],
    ] as const) {
      const repeat = await pollUntil(
        () =>
          spansOf(name, eventId).find(
            (span) => span.attributes['messaging.outbox.duplicate'] === true,
          ),
        { timeoutMs: 30_000, description: `"${name}" of the repeat, marked duplicate` },
      );
      expect(repeat.spanContext().traceId).toBe(caller.traceId);
      expect(parentOf(repeat)).toBe(
        idOf(eventId === orderRow.event_id ? chain.enqueueOrder : chain.enqueuePayment),
      );
    }
  });
});
