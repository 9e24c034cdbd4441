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
import { checkDeleted, sentOnTopic } from './short-retention.ts';
import type { InvariantExpectations, SystemSnapshot } from './snapshot.ts';
import { checkTopic } from './topics.ts';

export interface InvariantReport {
  readonly violations: readonly string[];
  readonly eventsPublished: number;
  readonly duplicatesDelivered: number;
}

/**
 * The snapshot without what the scenario injected itself: outbox rows outside any order,
 * garbage it produced to the topics, and everything about orders it invented.
 */
function withoutInjected(snapshot: SystemSnapshot, expect: InvariantExpectations): SystemSnapshot {
  const row = expect.isInjectedOutboxRow ?? (() => false);
  const message = expect.isInjectedMessage ?? (() => false);
  const invented = expect.isInjectedOrder ?? (() => false);
  const outbox = (entries: SystemSnapshot['orderOutbox']) =>
    entries.filter((entry) => !row(entry) && !invented(entry.partitionKey));
  const onTopic = (topic: string, messages: SystemSnapshot['orderTopic']) =>
    messages.filter((m) => !message({ topic, ...m }) && !invented(m.key));
  return {
    ...snapshot,
    payments: snapshot.payments.filter((payment) => !invented(payment.orderId)),
    orderOutbox: outbox(snapshot.orderOutbox),
    paymentOutbox: outbox(snapshot.paymentOutbox),
    inbox: snapshot.inbox.filter((entry) => !invented(entry.partitionKey)),
    orderHistory: snapshot.orderHistory.filter((entry) => !invented(entry.orderId)),
    paymentHistory: snapshot.paymentHistory.filter((entry) => !invented(entry.orderId)),
    orderTopic: onTopic(topics.orderEvents, snapshot.orderTopic),
    paymentTopic: onTopic(topics.paymentEvents, snapshot.paymentTopic),
  };
}

/**
 * The checks that still have their records once retention deleted published and processed
 * rows (`shortRetention`): orders and payments, each receiver's applications against what its
 * sender put on the topic, nothing parked, retention ran and deleted. Per-topic order and the
 * inbox's one row per event need the deleted rows, and are left to the other scenarios.
 */
function evaluateShortRetention(
  snapshot: SystemSnapshot,
  expect: InvariantExpectations,
  mustDelete: Readonly<Record<string, readonly string[]>>,
): string[] {
  const fromTopics = {
    ...snapshot,
    orderOutbox: sentOnTopic(snapshot.orderTopic),
    paymentOutbox: sentOnTopic(snapshot.paymentTopic),
  };
  return [
    ...checkOrdersAndPayments(snapshot, expect),
    ...checkApplications(fromTopics),
    ...checkParked(snapshot, expect),
    ...checkRetention(snapshot),
    ...checkDeleted(snapshot, mustDelete),
    ...checkRedelivery(topics.orderEvents, snapshot.orderTopic, expect),
    ...checkRedelivery(topics.paymentEvents, snapshot.paymentTopic, expect),
  ];
}

/** Every check over one snapshot: each entry of `violations` is one broken guarantee. */
export function evaluate(whole: SystemSnapshot, expect: InvariantExpectations): InvariantReport {
  const snapshot = withoutInjected(whole, expect);
  if (expect.shortRetention !== undefined) {
    const delivery = [snapshot.orderTopic, snapshot.paymentTopic].map((messages) => ({
      messages: messages.length,
      distinct: new Set(messages.map((m) => m.eventId)).size,
    }));
    return {
      violations: evaluateShortRetention(snapshot, expect, expect.shortRetention),
      eventsPublished: delivery.reduce((sum, d) => sum + d.distinct, 0),
      duplicatesDelivered: delivery.reduce((sum, d) => sum + d.messages - d.distinct, 0),
    };
  }
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
