import {
  aggregateTypes,
  schemaVersion,
  topics,
  type OrderCancelled,
} from '@outbox-inbox/contracts';
import { enqueue } from '@outbox-inbox/outbox';
import { traceHeaders, type TraceContext } from '@outbox-inbox/outbox/trace';
import type { Kysely } from 'kysely';
import type { OrderDatabase, OrderRow } from '../database/schema.ts';
import { recordOrderHistory } from '../history/record-order-history.ts';

/**
 * Cancels an order and emits OrderCancelled through the outbox; payment-service refunds the
 * order if it was paid (compensation). Cancelling a cancelled order changes nothing and emits
 * nothing. Returns undefined when the order does not exist.
 */
export async function cancelOrder(
  db: Kysely<OrderDatabase>,
  orderId: string,
  /** The request's trace: OrderCancelled and the refund it causes continue it. */
  trace?: TraceContext,
): Promise<OrderRow | undefined> {
  return db.transaction().execute(async (trx) => {
    // The row lock serialises a cancel with a concurrent payment result for the same order.
    const order = await trx
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', orderId)
      .forUpdate()
      .executeTakeFirst();
    if (!order || order.status === 'CANCELLED') return order;
    const cancelled = await trx
      .updateTable('orders')
      .set({ status: 'CANCELLED', updated_at: new Date() })
      .where('id', '=', orderId)
      .returningAll()
      .executeTakeFirstOrThrow();
    const payload: OrderCancelled = {
      schemaVersion,
      orderId,
      cancelledAt: cancelled.updated_at.toISOString(),
    };
    const { eventId } = await enqueue(trx, {
      eventType: 'OrderCancelled',
      aggregateType: aggregateTypes.order,
      aggregateId: orderId,
      topic: topics.orderEvents,
      partitionKey: orderId,
      payload,
      headers: traceHeaders(trace),
    });
    await recordOrderHistory(trx, cancelled, { eventId, eventType: 'OrderCancelled' });
    return cancelled;
  });
}
