import type { Transaction } from 'kysely';
import type { OrderDatabase, OrderRow } from '../database/schema.ts';

/**
 * Appends one step to the order's journey, in the transaction of the change it records: the
 * event the order emitted or applied, and the order's state after it.
 */
export async function recordOrderHistory(
  trx: Transaction<OrderDatabase>,
  order: Pick<OrderRow, 'id' | 'status' | 'payment_status'>,
  event: { readonly eventId: string; readonly eventType: string },
): Promise<void> {
  await trx
    .insertInto('order_history')
    .values({
      order_id: order.id,
      event_id: event.eventId,
      event_type: event.eventType,
      status: order.status,
      payment_status: order.payment_status,
    })
    .execute();
}
