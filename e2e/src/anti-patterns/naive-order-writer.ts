/**
 * DO NOT COPY: the two forbidden ways to publish an event, kept so the suite and the workshop
 * can show them failing under the same faults the outbox survives.
 *
 * - R-DIST-OBX-X1: send to Kafka inside the write transaction. The send is not atomic with the
 *   commit: when the commit fails after the send, consumers see an event for an order that
 *   never existed (a phantom).
 * - R-DIST-OBX-X2: send to Kafka after the commit. When Kafka is down at that moment the event
 *   is gone: the order exists, nobody downstream ever hears of it.
 */
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import type pg from 'pg';

export const naiveTopic = 'naive.order.events';

export const naiveSchema = `
  CREATE TABLE IF NOT EXISTS naive_order (
    id         uuid PRIMARY KEY,
    amount     integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`;

export interface NaiveWriterDeps {
  readonly pool: pg.Pool;
  readonly producer: Producer;
}

function orderCreated(orderId: string, amount: number) {
  return {
    key: orderId,
    value: JSON.stringify({ orderId, amount }),
    headers: { event_id: randomUUID(), event_type: 'OrderCreated' },
  };
}

/** X1. `beforeCommit` lets a test crash the database at the worst moment, after the send. */
export async function createOrderSendingInsideTransaction(
  deps: NaiveWriterDeps,
  amount: number,
  beforeCommit: () => Promise<void> = async () => undefined,
): Promise<string> {
  const orderId = randomUUID();
  const client = await deps.pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO naive_order (id, amount) VALUES ($1, $2)', [orderId, amount]);
    await deps.producer.send({
      topic: naiveTopic,
      acks: -1,
      messages: [orderCreated(orderId, amount)],
    });
    await beforeCommit();
    await client.query('COMMIT');
    return orderId;
  } catch (error) {
    broken = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(broken);
  }
}

/** X2. A failed send is logged and swallowed, as after-commit hooks do: the caller already has its 201. */
export async function createOrderSendingAfterCommit(
  deps: NaiveWriterDeps,
  amount: number,
  onSendFailure: (error: unknown) => void = () => undefined,
): Promise<string> {
  const orderId = randomUUID();
  await deps.pool.query('INSERT INTO naive_order (id, amount) VALUES ($1, $2)', [orderId, amount]);
  try {
    await deps.producer.send({
      topic: naiveTopic,
      acks: -1,
      messages: [orderCreated(orderId, amount)],
    });
  } catch (error) {
    onSendFailure(error);
  }
  return orderId;
}
