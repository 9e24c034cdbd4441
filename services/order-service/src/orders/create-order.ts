import { createHash } from 'node:crypto';
import { aggregateTypes, schemaVersion, topics, type OrderCreated } from '@outbox-inbox/contracts';
import { enqueue, type OutboxEventInput } from '@outbox-inbox/outbox';
import { traceHeaders, type TraceContext } from '@outbox-inbox/outbox/trace';
import { HttpError } from '@outbox-inbox/service-kit';
import type { Kysely, Transaction } from 'kysely';
import type { OrderDatabase, OrderRow } from '../database/schema.ts';
import { recordOrderHistory } from '../history/record-order-history.ts';
import { insertOrderRow } from './insert-order-row.ts';
import type { CreateOrderBody, OrderView } from './order-schemas.ts';
import { toOrderView } from './order-view.ts';

export interface CreateOrderResult {
  readonly status: number;
  readonly body: unknown;
  /** True when an earlier request with the same Idempotency-Key produced this response. */
  readonly replayed: boolean;
}

/** The request an Idempotency-Key was first used with, whatever the JSON key order. */
export function requestHash(body: CreateOrderBody): string {
  // Field by field, so the JSON key order a client happens to send does not matter.
  const canonical = JSON.stringify([body.customerId, body.amount, body.currency]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The OrderCreated event of a new order row. */
export function orderCreatedEvent(
  row: OrderRow,
  trace: TraceContext | undefined,
): OutboxEventInput {
  const payload: OrderCreated = {
    schemaVersion,
    orderId: row.id,
    customerId: row.customer_id,
    amount: Number(row.amount),
    currency: row.currency,
    createdAt: row.created_at.toISOString(),
  };
  return {
    eventType: 'OrderCreated',
    aggregateType: aggregateTypes.order,
    aggregateId: row.id,
    topic: topics.orderEvents,
    partitionKey: row.id,
    payload,
    // The request's trace travels with the event: payment-service continues it.
    headers: traceHeaders(trace),
  };
}

async function insertOrder(
  trx: Transaction<OrderDatabase>,
  body: CreateOrderBody,
  trace: TraceContext | undefined,
): Promise<OrderView> {
  const row = await insertOrderRow(trx, body);
  // Same transaction as the order row (R-DIST-OBX-1): both commit, or neither does.
  const { eventId } = await enqueue(trx, orderCreatedEvent(row, trace), {
    // The hot write path: the route wakes the relays after the commit instead (a NOTIFY in
    // this transaction would make every order's commit wait for the one before it).
    notify: false,
  });
  await recordOrderHistory(trx, row, { eventId, eventType: 'OrderCreated' });
  return toOrderView(row);
}

/**
 * Creates a PENDING order and its OrderCreated outbox row in one transaction. With an
 * idempotency key, a retry of the same request returns the first response and creates nothing;
 * the key reused with a different body is refused (422). The api commits concurrent requests
 * together (`order-group-commit.ts`); this is the path of one request, and of each request of
 * a group that failed as a whole.
 */
export async function createOrder(
  db: Kysely<OrderDatabase>,
  body: CreateOrderBody,
  idempotencyKey: string | undefined,
  trace?: TraceContext,
): Promise<CreateOrderResult> {
  return db.transaction().execute(async (trx) => {
    if (idempotencyKey === undefined) {
      return { status: 201, body: await insertOrder(trx, body, trace), replayed: false };
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
    const order = await insertOrder(trx, body, trace);
    await trx
      .updateTable('idempotency_key')
      .set({ response_status: 201, response_body: JSON.stringify(order) })
      .where('key', '=', idempotencyKey)
      .execute();
    return { status: 201, body: order, replayed: false };
  });
}
