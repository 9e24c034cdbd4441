import { isEvent } from '@outbox-inbox/contracts';
import type { ReceivedEvent } from '@outbox-inbox/outbox';
import { traceOf } from '@outbox-inbox/outbox/trace';
import { sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { OrderDatabase, OrderRow, OrderStatus } from '../database/schema.ts';
import { recordOrderHistory } from '../history/record-order-history.ts';

/** The columns a payment result sets. */
type PaymentColumns = Pick<OrderRow, 'status' | 'payment_status' | 'payment_id' | 'failure_reason'>;
type OrderChange = (current: OrderStatus) => Partial<PaymentColumns>;

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
  logApplied(logger, event, parsed.orderId, after.status);
}

/**
 * `applyPaymentEvent` for the events of a fetch at once, with three statements whatever their
 * number: one SELECT … FOR UPDATE of their orders, one UPDATE of the orders that change, one
 * INSERT of their history steps. The events are folded in the order given, by the same rules
 * as one at a time, so several results of one order (paid, then refunded) end as they would.
 */
export async function applyPaymentEvents(
  trx: Transaction<OrderDatabase>,
  events: readonly ReceivedEvent[],
  logger?: Logger,
): Promise<void> {
  const steps = events.flatMap((event) => {
    const parsed = parse(event);
    return parsed ? [{ event, ...parsed }] : [];
  });
  if (steps.length === 0) return;
  const orderIds = [...new Set(steps.map((step) => step.orderId))].sort();
  const locked = await lockOrders(trx, orderIds);
  const { updates, history } = foldSteps(locked, steps, logger);
  if (updates.length > 0) await updatePaymentColumns(trx, updates);
  if (history.length > 0) await trx.insertInto('order_history').values(history).execute();
}

/** An order's row as {@link applyPaymentEvents} locks and changes it. */
type LockedOrder = Pick<OrderRow, 'id'> & PaymentColumns;

/** A parsed payment result with the event it came from. */
interface Step {
  readonly event: ReceivedEvent;
  readonly orderId: string;
  readonly change: OrderChange;
}

/** One row of `order_history`, as {@link applyPaymentEvents} inserts it. */
interface HistoryStep {
  order_id: string;
  event_id: string;
  event_type: string;
  status: OrderStatus;
  payment_status: OrderRow['payment_status'];
}

/** Locks the orders' rows (FOR UPDATE) and reads their payment columns. */
function lockOrders(
  trx: Transaction<OrderDatabase>,
  orderIds: readonly string[],
): Promise<LockedOrder[]> {
  // Locked in one order (by id): the locks order these updates with a concurrent cancel, and
  // two transactions locking several orders never wait on each other in a cycle.
  return trx
    .selectFrom('orders')
    .select(['id', 'status', 'payment_status', 'payment_id', 'failure_reason'])
    .where('id', 'in', orderIds)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Applies the steps, in order, to the locked orders in memory: the orders that changed, as they
 * end, and one history step per event whose order exists (each logged as applied).
 */
function foldSteps(
  locked: readonly LockedOrder[],
  steps: readonly Step[],
  logger: Logger | undefined,
): { updates: LockedOrder[]; history: HistoryStep[] } {
  const orders = new Map(locked.map((order) => [order.id, order]));
  const changed = new Set<string>();
  const history: HistoryStep[] = [];
  for (const step of steps) {
    const order = orders.get(step.orderId);
    if (!order) continue;
    const change = step.change(order.status);
    // A refund is final, as in applyPaymentEvent.
    if (order.payment_status !== 'REFUNDED' || change.payment_status === 'REFUNDED') {
      orders.set(order.id, { ...order, ...change });
      changed.add(order.id);
    }
    const after = orders.get(order.id) ?? order;
    history.push({
      order_id: order.id,
      event_id: step.event.eventId,
      event_type: step.event.eventType,
      status: after.status,
      payment_status: after.payment_status,
    });
    logApplied(logger, step.event, order.id, after.status);
  }
  const updates = [...changed].map((id) => orders.get(id)).filter((order) => order !== undefined);
  return { updates, history };
}

/** Writes the payment columns of the given orders in one UPDATE. */
async function updatePaymentColumns(
  trx: Transaction<OrderDatabase>,
  updates: readonly LockedOrder[],
): Promise<void> {
  const column = <T>(pick: (order: LockedOrder) => T): T[] => updates.map(pick);
  const ids = column((o) => o.id);
  // The `= ANY` repeats the join's ids: a plan PostgreSQL keeps for this prepared statement is
  // made without them, and without it scanned every order (see createPgPool).
  await sql`
    UPDATE orders AS o SET status = c.status, payment_status = c.payment_status,
      payment_id = c.payment_id, failure_reason = c.failure_reason, updated_at = ${new Date()}
    FROM unnest(
      ${ids}::uuid[],
      ${column((o) => o.status)}::text[],
      ${column((o) => o.payment_status)}::text[],
      ${column((o) => o.payment_id)}::uuid[],
      ${column((o) => o.failure_reason)}::text[]
    ) AS c(id, status, payment_status, payment_id, failure_reason)
    WHERE o.id = ANY(${ids}::uuid[]) AND o.id = c.id
  `.execute(trx);
}

/** The last hop of the order's trace: the id the POST /orders request started. */
function logApplied(
  logger: Logger | undefined,
  event: ReceivedEvent,
  orderId: string,
  status: OrderStatus,
): void {
  logger?.info(
    { traceId: traceOf(event.headers)?.traceId, orderId, eventType: event.eventType, status },
    'payment event applied to its order',
  );
}
