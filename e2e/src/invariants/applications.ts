import type { Application, OutboxEntry, SystemSnapshot } from './snapshot.ts';

function eventsByKey(rows: readonly OutboxEntry[]): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const row of [...rows].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    byKey.set(row.partitionKey, [...(byKey.get(row.partitionKey) ?? []), row.eventId]);
  }
  return byKey;
}

/**
 * What a receiver applied, per order, is exactly what the sender emitted for it, once each
 * and in the sender's order: a repeat is a double application (a dedup layer failed), a gap
 * is a lost event, a swap is broken per-key order. Checked on the applications recorded in
 * the effect's own transaction, not on arrival.
 */
function checkApplied(
  receiver: string,
  applied: readonly Application[],
  sent: readonly OutboxEntry[],
  dead: ReadonlySet<string>,
): string[] {
  const violations: string[] = [];
  const expected = eventsByKey(sent);
  const got = new Map<string, string[]>();
  for (const row of applied) got.set(row.orderId, [...(got.get(row.orderId) ?? []), row.eventId]);
  for (const orderId of new Set([...expected.keys(), ...got.keys()])) {
    const want = (expected.get(orderId) ?? []).filter((eventId) => !dead.has(eventId));
    const have = got.get(orderId) ?? [];
    if (have.join() === want.join()) continue;
    const repeated = have.filter((eventId, n) => have.indexOf(eventId) !== n);
    const what =
      repeated.length > 0
        ? `applied event ${repeated[0]} ${have.filter((e) => e === repeated[0]).length} times`
        : have.length < want.length
          ? `applied ${have.length} of ${want.length} events`
          : have.length > want.length
            ? `applied ${have.length - want.length} events it was never sent`
            : 'applied its events out of order';
    violations.push(`${receiver}: order ${orderId} ${what}`);
  }
  return violations;
}

/** Both receivers: payment-service applied the order events, order-service the payment events. */
export function checkApplications(snapshot: SystemSnapshot): string[] {
  const dead = new Set(snapshot.inbox.filter((row) => row.dead).map((row) => row.eventId));
  return [
    ...checkApplied('payment-service', snapshot.paymentHistory, snapshot.orderOutbox, dead),
    ...checkApplied(
      'order-service',
      snapshot.orderHistory.filter((row) => row.eventType.startsWith('Payment')),
      snapshot.paymentOutbox,
      new Set(),
    ),
  ];
}
