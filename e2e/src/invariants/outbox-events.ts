import type { InvariantExpectations, OutboxEntry, SystemSnapshot } from './snapshot.ts';

function countByKeyAndType(rows: readonly OutboxEntry[]): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const ofKey = counts.get(row.partitionKey) ?? new Map<string, number>();
    ofKey.set(row.eventType, (ofKey.get(row.eventType) ?? 0) + 1);
    counts.set(row.partitionKey, ofKey);
  }
  return counts;
}

function describeCounts(counts: ReadonlyMap<string, number> | undefined): string {
  if (counts === undefined || counts.size === 0) return 'none';
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, n]) => `${n} ${type}`)
    .join(', ');
}

/**
 * Exactly the events each order's story emits, in both outboxes: one OrderCreated, one
 * OrderCancelled if it was cancelled; one PaymentCompleted or PaymentFailed (by amount), one
 * PaymentRefunded only for a cancelled paid order. Nothing for an order that does not exist,
 * and nothing left unpublished.
 */
export function checkOutboxEvents(
  snapshot: SystemSnapshot,
  expect: InvariantExpectations,
): string[] {
  const violations: string[] = [];
  const orderEvents = countByKeyAndType(snapshot.orderOutbox);
  const paymentEvents = countByKeyAndType(snapshot.paymentOutbox);
  const accepted = new Set(snapshot.accepted.map((order) => order.orderId));
  for (const order of snapshot.accepted) {
    const fails = order.amount > expect.paymentLimit;
    const wantOrder = new Map([['OrderCreated', 1]]);
    if (order.cancelled) wantOrder.set('OrderCancelled', 1);
    const wantPayment = new Map([[fails ? 'PaymentFailed' : 'PaymentCompleted', 1]]);
    if (order.cancelled && !fails) wantPayment.set('PaymentRefunded', 1);
    for (const [outbox, got, want] of [
      ['order', orderEvents.get(order.orderId), wantOrder],
      ['payment', paymentEvents.get(order.orderId), wantPayment],
    ] as const) {
      if (describeCounts(got) !== describeCounts(want))
        violations.push(
          `order ${order.orderId}: ${outbox} outbox has ${describeCounts(got)}, expected ${describeCounts(want)}`,
        );
    }
  }
  for (const [name, events] of [
    ['order', orderEvents],
    ['payment', paymentEvents],
  ] as const) {
    for (const key of events.keys()) {
      if (!accepted.has(key)) violations.push(`${name} outbox has events of unknown order ${key}`);
    }
  }
  const unpublished = [...snapshot.orderOutbox, ...snapshot.paymentOutbox].filter(
    (row) => !row.published,
  );
  if (unpublished.length > 0) violations.push(`${unpublished.length} outbox rows unpublished`);
  return violations;
}
