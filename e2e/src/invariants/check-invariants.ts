import type { LoadResult } from '../load-generator.ts';
import { topics } from '@outbox-inbox/contracts';
import { paymentLimit, type System } from '../system.ts';
import { checkApplications } from './applications.ts';
import { checkInbox } from './inbox.ts';
import { checkOrdersAndPayments } from './orders-and-payments.ts';
import { checkOutboxEvents } from './outbox-events.ts';
import { checkParked } from './parked.ts';
import { readSnapshot } from './read-snapshot.ts';
import { checkRedelivery } from './redelivery.ts';
import { checkRetention } from './retention.ts';
import type { InvariantExpectations, SystemSnapshot } from './snapshot.ts';
import { checkTopic } from './topics.ts';

export interface InvariantReport {
  readonly violations: readonly string[];
  readonly eventsPublished: number;
  readonly duplicatesDelivered: number;
}

/**
 * The snapshot without what the scenario injected itself: outbox rows outside any order, and
 * garbage it produced to the topics.
 */
function withoutInjected(snapshot: SystemSnapshot, expect: InvariantExpectations): SystemSnapshot {
  const row = expect.isInjectedOutboxRow ?? (() => false);
  const message = expect.isInjectedMessage ?? (() => false);
  return {
    ...snapshot,
    orderOutbox: snapshot.orderOutbox.filter((entry) => !row(entry)),
    paymentOutbox: snapshot.paymentOutbox.filter((entry) => !row(entry)),
    orderTopic: snapshot.orderTopic.filter((m) => !message({ topic: topics.orderEvents, ...m })),
    paymentTopic: snapshot.paymentTopic.filter(
      (m) => !message({ topic: topics.paymentEvents, ...m }),
    ),
  };
}

/** Every check over one snapshot: each entry of `violations` is one broken guarantee. */
export function evaluate(whole: SystemSnapshot, expect: InvariantExpectations): InvariantReport {
  const snapshot = withoutInjected(whole, expect);
  const orderTopic = checkTopic(topics.orderEvents, snapshot.orderTopic, snapshot.orderOutbox);
  const paymentTopic = checkTopic(
    topics.paymentEvents,
    snapshot.paymentTopic,
    snapshot.paymentOutbox,
  );
  const deliveries = [orderTopic.delivery, paymentTopic.delivery];
  return {
    violations: [
      ...checkOrdersAndPayments(snapshot, expect),
      ...checkOutboxEvents(snapshot, expect),
      ...checkInbox(snapshot, expect),
      ...checkApplications(snapshot),
      ...checkParked(snapshot, expect),
      ...checkRetention(snapshot),
      ...orderTopic.violations,
      ...paymentTopic.violations,
      ...checkRedelivery(topics.orderEvents, snapshot.orderTopic, expect),
      ...checkRedelivery(topics.paymentEvents, snapshot.paymentTopic, expect),
    ],
    eventsPublished: deliveries.reduce((sum, d) => sum + d.distinct, 0),
    duplicatesDelivered: deliveries.reduce((sum, d) => sum + d.messages - d.distinct, 0),
  };
}

/**
 * The suite's proof, read from both databases and both topics after the system settled: no
 * loss, no phantom, no double effect (each layer's own record), per-order order kept.
 */
export async function checkInvariants(
  system: System,
  load: LoadResult,
  expect: Partial<InvariantExpectations> = {},
): Promise<InvariantReport> {
  return evaluate(await readSnapshot(system, load), { paymentLimit, ...expect });
}
