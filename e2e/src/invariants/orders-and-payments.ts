import type { InvariantExpectations, SystemSnapshot } from './snapshot.ts';

/**
 * No lost write, no phantom order, one payment per order, and each order in the final state
 * its story calls for (paid, failed, cancelled and refunded).
 */
export function checkOrdersAndPayments(
  snapshot: SystemSnapshot,
  expect: InvariantExpectations,
): string[] {
  const violations: string[] = [];
  const acceptedIds = new Set(snapshot.accepted.map((order) => order.orderId));
  const orderById = new Map(snapshot.orders.map((order) => [order.id, order]));
  const paymentsOf = new Map<string, string[]>();
  for (const payment of snapshot.payments) {
    paymentsOf.set(payment.orderId, [...(paymentsOf.get(payment.orderId) ?? []), payment.status]);
  }
  for (const order of snapshot.orders) {
    if (!acceptedIds.has(order.id))
      violations.push(`order ${order.id} exists but its request never got a 201 (phantom)`);
  }
  for (const orderId of paymentsOf.keys()) {
    if (!orderById.has(orderId)) violations.push(`payment for unknown order ${orderId} (phantom)`);
  }
  for (const accepted of snapshot.accepted) {
    const order = orderById.get(accepted.orderId);
    if (!order) {
      violations.push(
        `order ${accepted.orderId} got a 201 but is not in the database (lost write)`,
      );
      continue;
    }
    const payments = paymentsOf.get(order.id) ?? [];
    if (payments.length !== 1) violations.push(`order ${order.id} has ${payments.length} payments`);
    const payment = payments[0];
    const fails = accepted.amount > expect.paymentLimit;
    if (accepted.cancelled) {
      const expected = fails ? 'FAILED' : 'REFUNDED';
      if (order.status !== 'CANCELLED')
        violations.push(`cancelled order ${order.id} is ${order.status}`);
      if (payment !== undefined && payment !== expected)
        violations.push(`cancelled order ${order.id}: payment ${payment}, expected ${expected}`);
    } else {
      const expected = fails ? 'PAYMENT_FAILED' : 'PAID';
      if (order.status !== expected)
        violations.push(`order ${order.id} is ${order.status}, expected ${expected}`);
      if (payment === 'REFUNDED')
        violations.push(`order ${order.id} was refunded but never cancelled`);
    }
  }
  return violations;
}
