import type { OrderRow } from '../database/schema.ts';
import type { OrderView } from './order-schemas.ts';

/** The API's shape of an order: camelCase, amount as a number, timestamps as ISO strings. */
export function toOrderView(row: OrderRow): OrderView {
  return {
    id: row.id,
    customerId: row.customer_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    paymentStatus: row.payment_status,
    paymentId: row.payment_id,
    failureReason: row.failure_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
