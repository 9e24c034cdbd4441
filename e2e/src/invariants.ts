import { pollUntil } from '@outbox-inbox/infra';
import type { LoadResult } from './load-generator.ts';
import { paymentLimit, topics, type System } from './system.ts';
import { readWholeTopic, type TopicMessage } from './topic-reader.ts';

type Pool = System['orderDb'];

async function rows<T>(pool: Pool, query: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(query, values)).rows as T[];
}

async function count(pool: Pool, query: string): Promise<number> {
  const [row] = await rows<{ n: string }>(pool, query);
  return Number(row?.n ?? 0);
}

/** What must be true once the system has settled; each entry is what is missing. */
async function unsettled(system: System, load: LoadResult): Promise<string[]> {
  const waiting: string[] = [];
  const orderBacklog = await count(
    system.orderDb,
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
  );
  const paymentBacklog = await count(
    system.paymentDb,
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
  );
  const inboxBacklog = await count(
    system.paymentDb,
    'SELECT count(*) AS n FROM inbox_event WHERE NOT processed AND dead_at IS NULL',
  );
  if (orderBacklog > 0) waiting.push(`${orderBacklog} order outbox rows unpublished`);
  if (paymentBacklog > 0) waiting.push(`${paymentBacklog} payment outbox rows unpublished`);
  if (inboxBacklog > 0) waiting.push(`${inboxBacklog} inbox rows unprocessed`);
  const open = await count(
    system.orderDb,
    `SELECT count(*) AS n FROM orders
      WHERE status = 'PENDING' OR (status = 'CANCELLED' AND payment_status IS DISTINCT FROM 'REFUNDED' AND payment_status IS DISTINCT FROM 'FAILED')`,
  );
  if (open > 0) waiting.push(`${open} orders not final`);
  if (load.accepted.size === 0) waiting.push('no order accepted');
  return waiting;
}

/** Polls until every accepted order is final and every queue is empty; returns the seconds it took. */
export async function waitUntilSettled(
  system: System,
  load: LoadResult,
  timeoutMs = 180_000,
): Promise<number> {
  const started = Date.now();
  let last: string[] = [];
  try {
    await pollUntil(
      async () => {
        last = await unsettled(system, load);
        return last.length === 0;
      },
      { timeoutMs, intervalMs: 250, description: 'the system to settle' },
    );
  } catch (error) {
    throw new Error(`the system did not settle within ${timeoutMs / 1000} s: ${last.join('; ')}`, {
      cause: error,
    });
  }
  return (Date.now() - started) / 1000;
}

interface Delivery {
  readonly messages: number;
  readonly distinct: number;
}

/**
 * Every outbox event reached the topic, nothing reached it that the outbox does not have,
 * and per key the first delivery of each event follows the outbox order.
 */
async function checkTopic(
  violations: string[],
  brokers: readonly string[],
  topic: string,
  outbox: Pool,
): Promise<Delivery> {
  const outboxRows = await rows<{ id: string; event_id: string; partition_key: string }>(
    outbox,
    'SELECT id, event_id, partition_key FROM outbox_event WHERE topic = $1',
    [topic],
  );
  const outboxId = new Map(outboxRows.map((row) => [row.event_id, BigInt(row.id)]));
  const messages: TopicMessage[] = await readWholeTopic(brokers, topic);
  const seen = new Set<string>();
  const lastIdOfKey = new Map<string, bigint>();
  for (const message of messages) {
    const id = outboxId.get(message.eventId);
    if (id === undefined) {
      violations.push(
        `${topic}: event ${message.eventId} is on the topic but not in the outbox (phantom)`,
      );
      continue;
    }
    if (seen.has(message.eventId)) continue;
    seen.add(message.eventId);
    const previous = lastIdOfKey.get(message.key);
    if (previous !== undefined && id < previous) {
      violations.push(`${topic}: key ${message.key} delivered outbox #${id} after #${previous}`);
    }
    lastIdOfKey.set(message.key, id);
  }
  const missing = outboxRows.filter((row) => !seen.has(row.event_id));
  if (missing.length > 0)
    violations.push(`${topic}: ${missing.length} outbox events never reached the topic (lost)`);
  return { messages: messages.length, distinct: seen.size };
}

export interface InvariantReport {
  readonly violations: readonly string[];
  readonly eventsPublished: number;
  readonly duplicatesDelivered: number;
}

/**
 * The suite's proof, read from both databases and both topics after the system settled:
 * no loss, no phantom, no double effect, per-order order kept.
 */
export async function checkInvariants(
  system: System,
  load: LoadResult,
  options: { expectedDead?: number } = {},
): Promise<InvariantReport> {
  const violations: string[] = [];
  const orders = await rows<{
    id: string;
    status: string;
    payment_status: string | null;
    amount: string;
  }>(system.orderDb, 'SELECT id, status, payment_status, amount FROM orders');
  const payments = await rows<{ order_id: string; status: string; n: string }>(
    system.paymentDb,
    'SELECT order_id, min(status) AS status, count(*) AS n FROM payments GROUP BY order_id',
  );
  const paymentOf = new Map(payments.map((payment) => [payment.order_id, payment]));

  for (const order of orders) {
    if (!load.accepted.has(order.id))
      violations.push(`order ${order.id} exists but its request never got a 201 (phantom)`);
  }
  const orderById = new Map(orders.map((order) => [order.id, order]));
  for (const accepted of load.accepted.values()) {
    const order = orderById.get(accepted.orderId);
    const payment = paymentOf.get(accepted.orderId);
    if (!order) {
      violations.push(
        `order ${accepted.orderId} got a 201 but is not in the database (lost write)`,
      );
      continue;
    }
    const fails = accepted.amount > paymentLimit;
    if (!payment) violations.push(`order ${order.id} has no payment`);
    else if (Number(payment.n) !== 1)
      violations.push(`order ${order.id} has ${payment.n} payments`);
    if (accepted.cancelled) {
      const expected = fails ? 'FAILED' : 'REFUNDED';
      if (order.status !== 'CANCELLED')
        violations.push(`cancelled order ${order.id} is ${order.status}`);
      if (payment && payment.status !== expected)
        violations.push(
          `cancelled order ${order.id}: payment ${payment.status}, expected ${expected}`,
        );
    } else {
      const expected = fails ? 'PAYMENT_FAILED' : 'PAID';
      if (order.status !== expected)
        violations.push(`order ${order.id} is ${order.status}, expected ${expected}`);
      if (payment && payment.status === 'REFUNDED')
        violations.push(`order ${order.id} was refunded but never cancelled`);
    }
  }
  for (const payment of payments) {
    if (!orderById.has(payment.order_id))
      violations.push(`payment for unknown order ${payment.order_id} (phantom)`);
  }

  const unpublished =
    (await count(
      system.orderDb,
      'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
    )) +
    (await count(
      system.paymentDb,
      'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
    ));
  if (unpublished > 0) violations.push(`${unpublished} outbox rows unpublished`);
  const unprocessed = await count(
    system.paymentDb,
    'SELECT count(*) AS n FROM inbox_event WHERE NOT processed',
  );
  const dead = await count(
    system.paymentDb,
    'SELECT count(*) AS n FROM inbox_event WHERE dead_at IS NOT NULL',
  );
  if (dead !== (options.expectedDead ?? 0))
    violations.push(`${dead} dead inbox rows, expected ${options.expectedDead ?? 0}`);
  if (unprocessed - dead > 0) violations.push(`${unprocessed - dead} inbox rows unprocessed`);

  // As consumed: payment-service's inbox holds each order's events in the order it received them.
  const inboxOrder = await rows<{ partition_key: string; event_id: string }>(
    system.paymentDb,
    'SELECT partition_key, event_id FROM inbox_event ORDER BY seq',
  );
  const orderOutbox = new Map(
    (
      await rows<{ event_id: string; id: string }>(
        system.orderDb,
        'SELECT event_id, id FROM outbox_event',
      )
    ).map((row) => [row.event_id, BigInt(row.id)]),
  );
  const lastInboxId = new Map<string, bigint>();
  for (const row of inboxOrder) {
    const id = orderOutbox.get(row.event_id);
    if (id === undefined) continue;
    const previous = lastInboxId.get(row.partition_key);
    if (previous !== undefined && id < previous)
      violations.push(`inbox: order ${row.partition_key} received #${id} after #${previous}`);
    lastInboxId.set(row.partition_key, id);
  }

  const brokers = system.stack.kafkaBrokers;
  const orderEvents = await checkTopic(violations, brokers, topics.orders, system.orderDb);
  const paymentEvents = await checkTopic(violations, brokers, topics.payments, system.paymentDb);
  return {
    violations,
    eventsPublished: orderEvents.distinct + paymentEvents.distinct,
    duplicatesDelivered:
      orderEvents.messages -
      orderEvents.distinct +
      (paymentEvents.messages - paymentEvents.distinct),
  };
}
