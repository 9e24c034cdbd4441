import type { InboxEvent } from '@outbox-inbox/outbox';
import type { Transaction } from 'kysely';
import type { PaymentDatabase, PaymentOutcome } from '../database/schema.ts';

/** Records that the handler applied `event` to the order's payment, in the handler's transaction. */
export async function recordPaymentHistory(
  trx: Transaction<PaymentDatabase>,
  orderId: string,
  event: Pick<InboxEvent, 'eventId' | 'eventType'>,
  outcome: PaymentOutcome,
): Promise<void> {
  await trx
    .insertInto('payment_history')
    .values({ order_id: orderId, event_id: event.eventId, event_type: event.eventType, outcome })
    .execute();
}
