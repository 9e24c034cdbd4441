import { enqueueMany, type BatchInboxHandler } from '@outbox-inbox/outbox';
import { sql } from 'kysely';
import type { PaymentDatabase, PaymentOutcome, PaymentRow } from '../database/schema.ts';
import type { PaymentDecision } from './decide-payment.ts';
import { orderOf, paymentAnswer, paymentOf } from './handle-order-created.ts';
import type { PaymentGateway } from './payment-gateway.ts';

/**
 * The batch form of handleOrderCreated, same rules: a claim's OrderCreated events are written
 * with three statements whatever their number (the payments, their outbox events, the
 * history, each by `unnest`), instead of three per event. The provider is charged per event,
 * as before, with no transaction. The payments' ON CONFLICT on order_id answers which events
 * are repeats; those change nothing and are recorded as UNCHANGED. A claim holds one event per
 * order (one per partition key), so no two items of a batch meet on order_id.
 */
export function handleOrderCreatedBatch(
  gateway: PaymentGateway,
): BatchInboxHandler<PaymentDatabase, PaymentDecision> {
  return {
    call: (event, signal) =>
      gateway.charge({ idempotencyKey: event.eventId, ...orderOf(event) }, signal),
    async applyBatch(trx, items) {
      const applied = items.map(({ event, result }) => ({
        event,
        decision: result,
        order: orderOf(event),
        row: paymentOf(orderOf(event), result),
      }));
      const rows = applied.map(({ row }) => row);
      const inserted = await sql<Pick<PaymentRow, 'id' | 'order_id' | 'created_at' | 'status'>>`
        INSERT INTO payments (id, order_id, customer_id, amount, currency, status, failure_reason)
        SELECT * FROM unnest(
          ${rows.map((row) => row.id)}::uuid[],
          ${rows.map((row) => row.order_id)}::uuid[],
          ${rows.map((row) => row.customer_id)}::text[],
          ${rows.map((row) => row.amount)}::bigint[],
          ${rows.map((row) => row.currency)}::text[],
          ${rows.map((row) => row.status)}::text[],
          ${rows.map((row) => row.failure_reason)}::text[])
        ON CONFLICT (order_id) DO NOTHING
        RETURNING id, order_id, created_at, status
      `.execute(trx);
      const created = new Map(inserted.rows.map((payment) => [payment.order_id, payment]));
      const answers = applied.flatMap(({ event, decision, order }) => {
        const payment = created.get(order.orderId);
        return payment === undefined ? [] : [paymentAnswer(order, event, payment, decision)];
      });
      // The processor wakes the relays after the claim's commit (its relayNotifier).
      await enqueueMany(trx, answers, { notify: false });
      const outcomes: PaymentOutcome[] = applied.map(
        ({ order }) => created.get(order.orderId)?.status ?? 'UNCHANGED',
      );
      await sql`
        INSERT INTO payment_history (order_id, event_id, event_type, outcome)
        SELECT * FROM unnest(
          ${applied.map(({ order }) => order.orderId)}::uuid[],
          ${applied.map(({ event }) => event.eventId)}::uuid[],
          ${applied.map(({ event }) => event.eventType)}::text[],
          ${outcomes}::text[])
      `.execute(trx);
    },
  };
}
