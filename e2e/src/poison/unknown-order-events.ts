import { randomUUID } from 'node:crypto';
import { topics } from '@outbox-inbox/contracts';
import type pg from 'pg';
import type { PoisonMessage } from './poison-messages.ts';
import type { Landed } from './produce-poison.ts';

type RawMessage = Pick<PoisonMessage, 'topic' | 'key' | 'value' | 'headers'>;

/**
 * Valid events about orders order-service never accepted: well-formed, keyed by their order,
 * passing their contracts. No receiver can tell them from real ones, so none may park them.
 * payment-service charges the invented order (OrderCreated is its command to do so) and
 * publishes the result; order-service, which has no such order, applies nothing.
 */
export interface UnknownOrderEvents {
  /** The order an OrderCreated on order.events is about. */
  readonly createdFor: string;
  readonly createdEventId: string;
  /** The order a PaymentCompleted on payment.events is about. */
  readonly paidFor: string;
  readonly paidEventId: string;
  readonly messages: readonly RawMessage[];
}

function event(topic: string, type: string, orderId: string, eventId: string, payload: object) {
  return {
    topic,
    key: Buffer.from(orderId),
    value: Buffer.from(JSON.stringify({ schemaVersion: 1, orderId, ...payload })),
    headers: {
      event_id: eventId,
      event_type: type,
      aggregate_type: type.startsWith('Order') ? 'order' : 'payment',
      aggregate_id: orderId,
      occurred_at: new Date().toISOString(),
    },
  };
}

export function unknownOrderEvents(): UnknownOrderEvents {
  const createdFor = randomUUID();
  const createdEventId = randomUUID();
  const paidFor = randomUUID();
  const paidEventId = randomUUID();
  const now = new Date().toISOString();
  return {
    createdFor,
    createdEventId,
    paidFor,
    paidEventId,
    messages: [
      event(topics.orderEvents, 'OrderCreated', createdFor, createdEventId, {
        customerId: 'nobody',
        amount: 100,
        currency: 'EUR',
        createdAt: now,
      }),
      event(topics.paymentEvents, 'PaymentCompleted', paidFor, paidEventId, {
        paymentId: randomUUID(),
        amount: 100,
        currency: 'EUR',
        completedAt: now,
      }),
    ],
  };
}

/** The databases of the two receivers, order-service's and payment-service's. */
interface ReceiverDatabases {
  readonly orderDb: pg.Pool;
  readonly paymentDb: pg.Pool;
}

async function count(pool: pg.Pool, query: string, values: unknown[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(query, values);
  return Number(rows[0]?.n ?? 0);
}

/**
 * How each receiver took the events about invented orders, once the system settled: empty
 * when payment-service charged the invented order once and published the result, order-service
 * recorded both events as processed and applied nothing, and neither was parked.
 */
export async function unknownOrderProblems(
  databases: ReceiverDatabases,
  events: UnknownOrderEvents,
  /** Where `events.messages` landed, in their order. */
  landed: readonly Landed[],
): Promise<string[]> {
  const charged = await chargeProblems(databases.paymentDb, events.createdFor);
  const received = await receiptProblems(databases, events);
  const parked = await parkedProblems(databases, landed);
  return [...charged, ...received, ...parked];
}

/** Whether payment-service charged the invented order once and published the one result. */
async function chargeProblems(paymentDb: pg.Pool, createdFor: string): Promise<string[]> {
  const problems: string[] = [];
  const payments = await count(
    paymentDb,
    'SELECT count(*) AS n FROM payments WHERE order_id = $1',
    [createdFor],
  );
  if (payments !== 1) problems.push(`invented order: ${payments} payments, expected 1`);
  const published = await count(
    paymentDb,
    `SELECT count(*) AS n FROM outbox_event
      WHERE partition_key = $1 AND published_at IS NOT NULL`,
    [createdFor],
  );
  if (published !== 1) problems.push(`invented order: ${published} payment events published`);
  return problems;
}

/**
 * Whether order-service created no invented order, and each receiver recorded the events about
 * invented orders as processed.
 */
async function receiptProblems(
  databases: ReceiverDatabases,
  events: UnknownOrderEvents,
): Promise<string[]> {
  const { orderDb, paymentDb } = databases;
  const { createdFor, paidFor, createdEventId, paidEventId } = events;
  const problems: string[] = [];
  const orders = await count(
    orderDb,
    'SELECT count(*) AS n FROM orders WHERE id = ANY($1::uuid[])',
    [[createdFor, paidFor]],
  );
  if (orders !== 0) problems.push(`order-service created ${orders} invented orders`);
  const stored = await count(
    paymentDb,
    'SELECT count(*) AS n FROM inbox_event WHERE event_id = $1 AND processed',
    [createdEventId],
  );
  if (stored !== 1)
    problems.push('the OrderCreated of an invented order is not processed in the inbox');
  const paymentEventIds = await paymentDb.query<{ event_id: string }>(
    'SELECT event_id FROM outbox_event WHERE partition_key = $1',
    [createdFor],
  );
  const processed = await count(
    orderDb,
    'SELECT count(*) AS n FROM processed_event WHERE event_id = ANY($1::uuid[])',
    [[paidEventId, ...paymentEventIds.rows.map((row) => row.event_id)]],
  );
  if (processed !== 1 + paymentEventIds.rows.length)
    problems.push(
      `order-service processed ${processed} of the payment events about invented orders`,
    );
  return problems;
}

/** Whether a receiver parked an event about an invented order. */
async function parkedProblems(
  databases: ReceiverDatabases,
  landed: readonly Landed[],
): Promise<string[]> {
  const problems: string[] = [];
  // Where each landed, on the topic of the receiver that would have parked it.
  const receivers = [databases.paymentDb, databases.orderDb];
  for (const [n, at] of landed.entries()) {
    const pool = receivers[n];
    if (pool === undefined) continue;
    const parked = await count(
      pool,
      `SELECT count(*) AS n FROM parked_message
        WHERE topic = $1 AND kafka_partition = $2 AND kafka_offset = $3`,
      [at.topic, at.partition, at.offset],
    );
    if (parked !== 0) problems.push(`the event about an invented order on ${at.topic} was parked`);
  }
  return problems;
}
