import {
  aggregateTypes,
  isEvent,
  schemaVersion,
  topics,
  type PaymentRefunded,
} from '@outbox-inbox/contracts';
import { enqueue, type InboxHandler } from '@outbox-inbox/outbox';
import { traceHeaders, traceOf } from '@outbox-inbox/outbox/trace';
import type { PaymentDatabase } from '../database/schema.ts';
import { recordPaymentHistory } from '../history/record-payment-history.ts';

/**
 * OrderCancelled → the compensation: a completed payment is refunded (PaymentRefunded through
 * the outbox). A failed or already refunded payment needs nothing. The inbox handles each
 * order's events in order, so the OrderCreated before it has been handled already.
 */
export function handleOrderCancelled(): InboxHandler<PaymentDatabase> {
  return async (trx, event) => {
    const cancelled = event.payload;
    if (!isEvent('OrderCancelled', cancelled))
      throw new Error(`event ${event.eventId} is not an OrderCancelled`);
    const payment = await trx
      .selectFrom('payments')
      .selectAll()
      .where('order_id', '=', cancelled.orderId)
      .forUpdate()
      .executeTakeFirst();
    if (payment?.status !== 'COMPLETED') {
      await recordPaymentHistory(trx, cancelled.orderId, event, 'UNCHANGED');
      return;
    }
    const refunded = await trx
      .updateTable('payments')
      .set({ status: 'REFUNDED', refunded_at: new Date(), updated_at: new Date() })
      .where('id', '=', payment.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const payload: PaymentRefunded = {
      schemaVersion,
      paymentId: payment.id,
      orderId: payment.order_id,
      amount: Number(payment.amount),
      currency: payment.currency,
      refundedAt: (refunded.refunded_at ?? refunded.updated_at).toISOString(),
    };
    await enqueue(trx, {
      eventType: 'PaymentRefunded',
      aggregateType: aggregateTypes.payment,
      aggregateId: payment.id,
      topic: topics.paymentEvents,
      partitionKey: payment.order_id,
      payload,
      headers: traceHeaders(traceOf(event.headers)),
    });
    await recordPaymentHistory(trx, payment.order_id, event, 'REFUNDED');
  };
}
