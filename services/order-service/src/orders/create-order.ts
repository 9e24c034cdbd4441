import { createHash, randomUUID } from 'node:crypto';
import { aggregateTypes, schemaVersion, topics, type OrderCreated } from '@outbox-inbox/contracts';
import { enqueue } from '@outbox-inbox/outbox';
import { HttpError } from '@outbox-inbox/service-kit';
import type { Kysely, Transaction } from 'kysely';
import type { OrderDatabase } from '../database/schema.ts';
import type { CreateOrderBody, OrderView } from './order-schemas.ts';
import { toOrderView } from './order-view.ts';

export interface CreateOrderResult {
  readonly status: number;
  readonly body: unknown;
  /** True when an earlier request with the same Idempotency-Key produced this response. */
  readonly replayed: boolean;
}

function requestHash(body: CreateOrderBody): string {
  // Field by field, so the JSON key order a client happens to send does not matter.
  const canonical = JSON.stringify([body.customerId, body.amount, body.currency]);
  return createHash('sha256').update(canonical).digest('hex');
}

export interface CreateOrderOptions {
  /** BENCHMARK ONLY (`pnpm bench` B4): skip the outbox row to price it. Breaks R-DIST-OBX-1. */
  readonly benchmarkSkipOutbox?: boolean;
}

async function insertOrder(
  trx: Transaction<OrderDatabase>,
  body: CreateOrderBody,
  options: CreateOrderOptions,
): Promise<OrderView> {
  const row = await trx
    .insertInto('orders')
    .values({
      id: randomUUID(),
      customer_id: body.customerId,
      amount: body.amount,
      currency: body.currency,
      status: 'PENDING',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (options.benchmarkSkipOutbox === true) return toOrderView(row);
  const payload: OrderCreated = {
    schemaVersion,
    orderId: row.id,
    customerId: row.customer_id,
    amount: Number(row.amount),
    currency: row.currency,
    createdAt: row.created_at.toISOString(),
  };
  // Same transaction as the order row (R-DIST-OBX-1): both commit, or neither does.
  await enqueue(trx, {
    eventType: 'OrderCreated',
    aggregateType: aggregateTypes.order,
    aggregateId: row.id,
    topic: topics.orderEvents,
    partitionKey: row.id,
    payload,
  });
  return toOrderView(row);
}

/**
 * Creates a PENDING order and its OrderCreated outbox row in one transaction. With an
 * idempotency key, a retry of the same request returns the first response and creates nothing;
 * the key reused with a different body is refused (422).
 */
export async function createOrder(
  db: Kysely<OrderDatabase>,
  body: CreateOrderBody,
  idempotencyKey: string | undefined,
  options: CreateOrderOptions = {},
): Promise<CreateOrderResult> {
  return db.transaction().execute(async (trx) => {
    if (idempotencyKey === undefined) {
      return { status: 201, body: await insertOrder(trx, body, options), replayed: false };
    }
    const hash = requestHash(body);
    // A concurrent request with the same key blocks here until the first one commits, then
    // finds its row: the key is claimed exactly once.
    const claimed = await trx
      .insertInto('idempotency_key')
      .values({ key: idempotencyKey, request_hash: hash })
      .onConflict((oc) => oc.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!claimed) {
      const first = await trx
        .selectFrom('idempotency_key')
        .select(['request_hash', 'response_status', 'response_body'])
        .where('key', '=', idempotencyKey)
        .executeTakeFirstOrThrow();
      if (first.request_hash !== hash) {
        throw new HttpError(
          422,
          'IDEMPOTENCY_KEY_REUSED',
          'this Idempotency-Key was already used with a different request body',
        );
      }
      return { status: first.response_status ?? 201, body: first.response_body, replayed: true };
    }
    const order = await insertOrder(trx, body, options);
    await trx
      .updateTable('idempotency_key')
      .set({ response_status: 201, response_body: JSON.stringify(order) })
      .where('key', '=', idempotencyKey)
      .execute();
    return { status: 201, body: order, replayed: false };
  });
}
