import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  aggregateTypes,
  isEvent,
  schemaVersion,
  topics,
  type PaymentCompleted,
  type PaymentFailed,
} from '@outbox-inbox/contracts';
import { enqueue, type InboxHandler } from '@outbox-inbox/outbox';
import type { PaymentDatabase } from '../database/schema.ts';
import { decidePayment } from './decide-payment.ts';

export interface PaymentRules {
  readonly amountLimit: number;
  readonly latencyMs: number;
}

/**
 * OrderCreated → exactly one payment per order, and its PaymentCompleted / PaymentFailed
 * through the outbox, in the inbox row's transaction. A repeat finds the payment and does
 * nothing; two racing attempts meet the unique constraint on order_id.
 */
export function handleOrderCreated(rules: PaymentRules): InboxHandler<PaymentDatabase> {
  return async (trx, event) => {
    const order = event.payload;
    // The inbox writer validated the payload; this narrows it (and guards a replayed row).
    if (!isEvent('OrderCreated', order))
      throw new Error(`event ${event.eventId} is not an OrderCreated`);
    const existing = await trx
      .selectFrom('payments')
      .select('id')
      .where('order_id', '=', order.orderId)
      .executeTakeFirst();
    if (existing) return;

    // The simulated gateway call: its latency is what the inbox absorbs during a burst.
    if (rules.latencyMs > 0) await sleep(rules.latencyMs);
    const decision = decidePayment(order, rules);
    const payment = await trx
      .insertInto('payments')
      .values({
        id: randomUUID(),
        order_id: order.orderId,
        customer_id: order.customerId,
        amount: order.amount,
        currency: order.currency,
        status: decision.outcome,
        failure_reason: decision.outcome === 'FAILED' ? decision.reason : null,
      })
      .onConflict((oc) => oc.column('order_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!payment) return;

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
    await enqueue(trx, {
      ...result,
      aggregateType: aggregateTypes.payment,
      aggregateId: payment.id,
      topic: topics.paymentEvents,
      partitionKey: order.orderId,
    });
  };
}
