import type { PaymentRow } from '../database/schema.ts';
import type { PaymentView } from './payment-schemas.ts';

/** The API's shape of a payment: camelCase, amount as a number, timestamps as ISO strings. */
export function toPaymentView(row: PaymentRow): PaymentView {
  return {
    id: row.id,
    orderId: row.order_id,
    customerId: row.customer_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    failureReason: row.failure_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    refundedAt: row.refunded_at?.toISOString() ?? null,
  };
}
