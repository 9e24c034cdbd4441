import { isEvent } from '@outbox-inbox/contracts';
import { traceOf, type ReceivedEvent } from '@outbox-inbox/outbox';
import type { Transaction, Updateable } from 'kysely';
import type { Logger } from 'pino';
import type { OrderDatabase, OrderStatus, OrdersTable } from '../database/schema.ts';
import { recordOrderHistory } from '../history/record-order-history.ts';

type OrderChange = (current: OrderStatus) => Updateable<OrdersTable>;

/** A payment result moves only a PENDING order; a cancelled order stays cancelled. */
function nextStatus(current: OrderStatus, onPending: OrderStatus): OrderStatus {
  return current === 'PENDING' ? onPending : current;
}

function parse(event: ReceivedEvent): { orderId: string; change: OrderChange } | undefined {
  const { eventType, payload } = event;
  if (eventType === 'PaymentCompleted' && isEvent('PaymentCompleted', payload)) {
    return {
      orderId: payload.orderId,
      change: (current) => ({
        status: nextStatus(current, 'PAID'),
        payment_status: 'PAID',
        payment_id: payload.paymentId,
      }),
    };
  }
  if (eventType === 'PaymentFailed' && isEvent('PaymentFailed', payload)) {
    return {
      orderId: payload.orderId,
      change: (current) => ({
        status: nextStatus(current, 'PAYMENT_FAILED'),
        payment_status: 'FAILED',
        payment_id: payload.paymentId,
        failure_reason: payload.reason,
      }),
    };
  }
  if (eventType === 'PaymentRefunded' && isEvent('PaymentRefunded', payload)) {
    return {
      orderId: payload.orderId,
      change: () => ({ payment_status: 'REFUNDED', payment_id: payload.paymentId }),
    };
  }
  return undefined;
}

/**
 * Applies a payment result to its order, inside the dedup consumer's transaction: the
 * `processed_event` row and this update commit together, so a redelivery changes nothing.
 * A PENDING order becomes PAID or PAYMENT_FAILED; a cancelled order stays CANCELLED and
 * records what happened to its money (PAID, then REFUNDED).
 */
export async function applyPaymentEvent(
  trx: Transaction<OrderDatabase>,
  event: ReceivedEvent,
  logger?: Logger,
): Promise<void> {
  // The consumer validated the payload against its contract; unknown types are ignored.
  const parsed = parse(event);
  if (!parsed) return;
  // The row lock orders this update with a concurrent cancel of the same order.
  const order = await trx
    .selectFrom('orders')
    .select(['status', 'payment_status'])
    .where('id', '=', parsed.orderId)
    .forUpdate()
    .executeTakeFirst();
  if (!order) return;
  const change = parsed.change(order.status);
  // A refund is final: a replayed PaymentCompleted (e.g. after an outbox replay) never undoes it.
  const after =
    order.payment_status === 'REFUNDED' && change.payment_status !== 'REFUNDED'
      ? order
      : await trx
          .updateTable('orders')
          .set({ ...change, updated_at: new Date() })
          .where('id', '=', parsed.orderId)
          .returning(['status', 'payment_status'])
          .executeTakeFirstOrThrow();
  // Every applied event is a step of the journey, also one that changed nothing: a second
  // application of the same event would otherwise be invisible behind the rules above.
  await recordOrderHistory(trx, { id: parsed.orderId, ...after }, event);
  // The last hop of the order's trace: the id the POST /orders request started.
  logger?.info(
    {
      traceId: traceOf(event.headers)?.traceId,
      orderId: parsed.orderId,
      eventType: event.eventType,
      status: after.status,
    },
    'payment event applied to its order',
  );
}
