import { randomUUID } from 'node:crypto';
import {
  aggregateTypes,
  isEvent,
  schemaVersion,
  topics,
  type OrderCreated,
  type PaymentCompleted,
  type PaymentFailed,
} from '@outbox-inbox/contracts';
import type { Transaction } from 'kysely';
import {
  enqueue,
  type CallingInboxHandler,
  type InboxEvent,
  type OutboxEventInput,
} from '@outbox-inbox/outbox';
import { traceHeaders, traceOf } from '@outbox-inbox/outbox/trace';
import type { PaymentDatabase, PaymentRow } from '../database/schema.ts';
import { recordPaymentHistory } from '../history/record-payment-history.ts';
import type { PaymentDecision } from './decide-payment.ts';
import type { PaymentGateway } from './payment-gateway.ts';

/** The OrderCreated an inbox event carries. */
export function orderOf(event: InboxEvent): OrderCreated {
  const order = event.payload;
  // The inbox writer validated the payload; this narrows it (and guards a replayed row).
  if (!isEvent('OrderCreated', order)) {
    throw new Error(`event ${event.eventId} is not an OrderCreated`);
  }
  return order;
}

/** The payment row a decision makes of an order (the first application's; a repeat keeps it). */
export function paymentOf(order: OrderCreated, decision: PaymentDecision) {
  return {
    id: randomUUID(),
    order_id: order.orderId,
    customer_id: order.customerId,
    amount: order.amount,
    currency: order.currency,
    status: decision.outcome,
    failure_reason: decision.outcome === 'FAILED' ? decision.reason : null,
  } as const;
}

/** The PaymentCompleted / PaymentFailed of a new payment, continuing the order's trace. */
export function paymentAnswer(
  order: OrderCreated,
  event: InboxEvent,
  payment: Pick<PaymentRow, 'id' | 'created_at'>,
  decision: PaymentDecision,
): OutboxEventInput {
  const at = payment.created_at.toISOString();
  const common = {
    schemaVersion,
    paymentId: payment.id,
    orderId: order.orderId,
    amount: order.amount,
    currency: order.currency,
  } as const;
  const result =
    decision.outcome === 'COMPLETED'
      ? {
          eventType: 'PaymentCompleted',
          payload: { ...common, completedAt: at } satisfies PaymentCompleted,
        }
      : {
          eventType: 'PaymentFailed',
          payload: { ...common, reason: decision.reason, failedAt: at } satisfies PaymentFailed,
        };
  return {
    ...result,
    aggregateType: aggregateTypes.payment,
    aggregateId: payment.id,
    topic: topics.paymentEvents,
    partitionKey: order.orderId,
    // The answer continues the order's trace (a child of the hop that brought the event).
    headers: traceHeaders(traceOf(event.headers)),
  };
}

/**
 * OrderCreated → the provider is charged, then exactly one payment per order and its
 * PaymentCompleted / PaymentFailed go through the outbox, in the inbox row's short transaction.
 * The provider call holds no transaction (see CallingInboxHandler); the event id is its
 * idempotency key, so a repeat after a crash or timeout charges once. A repeat of the event,
 * or two racing attempts, meet the unique constraint on order_id: the INSERT's ON CONFLICT
 * answers whether the payment is new, and a repeat changes nothing. Either way the application
 * is recorded in payment_history. The per-event form, as a fork starts; payment-service runs
 * the batch form of the same rules (handle-order-created-batch.ts).
 */
export function handleOrderCreated(
  gateway: PaymentGateway,
): CallingInboxHandler<PaymentDatabase, PaymentDecision> {
  return {
    call: (event, signal) =>
      gateway.charge({ idempotencyKey: event.eventId, ...orderOf(event) }, signal),
    apply: (trx, event, decision) => applyPayment(trx, orderOf(event), event, decision),
  };
}

async function applyPayment(
  trx: Transaction<PaymentDatabase>,
  order: OrderCreated,
  event: InboxEvent,
  decision: PaymentDecision,
): Promise<void> {
  const payment = await trx
    .insertInto('payments')
    .values(paymentOf(order, decision))
    .onConflict((oc) => oc.column('order_id').doNothing())
    .returning(['id', 'created_at', 'status'])
    .executeTakeFirst();
  if (!payment) {
    await recordPaymentHistory(trx, order.orderId, event, 'UNCHANGED');
    return;
  }
  // The processor wakes the relays after the row's commit (its relayNotifier).
  await enqueue(trx, paymentAnswer(order, event, payment, decision), { notify: false });
  await recordPaymentHistory(trx, order.orderId, event, payment.status);
}
