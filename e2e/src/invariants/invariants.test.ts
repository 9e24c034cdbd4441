import { describe, expect, it } from 'vitest';
import type { TopicMessage } from '../topic-reader.ts';
import { evaluate } from './check-invariants.ts';
import type { Application, OutboxEntry, SystemSnapshot } from './snapshot.ts';

const limit = 1000;
let counter = 0;
const uuid = (): string => `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`;

/** The snapshot with arrays a test may change in place. */
type Editable = {
  -readonly [K in keyof SystemSnapshot]: SystemSnapshot[K] extends readonly (infer U)[]
    ? U[]
    : SystemSnapshot[K];
};

/** A settled system where every guarantee holds: the base each test breaks in one place. */
function healthy(stories: readonly { amount: number; cancelled: boolean }[]): Editable {
  const snapshot = {
    accepted: [] as SystemSnapshot['accepted'][number][],
    orders: [] as { id: string; status: string; paymentStatus: string | null }[],
    payments: [] as { orderId: string; status: string }[],
    orderOutbox: [] as OutboxEntry[],
    paymentOutbox: [] as OutboxEntry[],
    inbox: [] as SystemSnapshot['inbox'][number][],
    orderHistory: [] as Application[],
    paymentHistory: [] as Application[],
    parked: [] as SystemSnapshot['parked'][number][],
    orderTopic: [] as TopicMessage[],
    paymentTopic: [] as TopicMessage[],
    retentionRuns: [
      { service: 'order-service', completed: 12, deleted: { outbox_event: 40 } },
      { service: 'payment-service', completed: 12, deleted: { inbox_event: 30 } },
    ] as SystemSnapshot['retentionRuns'][number][],
  };
  let id = 0n;
  const emit = (outbox: OutboxEntry[], topic: TopicMessage[], key: string, type: string) => {
    const row = { id: ++id, eventId: uuid(), eventType: type, partitionKey: key, published: true };
    outbox.push(row);
    topic.push({
      partition: 0,
      offset: String(topic.length),
      key,
      eventId: row.eventId,
      eventType: type,
    });
    return row;
  };
  for (const story of stories) {
    const orderId = uuid();
    const fails = story.amount > limit;
    snapshot.accepted.push({ orderId, amount: story.amount, cancelled: story.cancelled });
    snapshot.orders.push({
      id: orderId,
      status: story.cancelled ? 'CANCELLED' : fails ? 'PAYMENT_FAILED' : 'PAID',
      paymentStatus: fails ? 'FAILED' : story.cancelled ? 'REFUNDED' : 'PAID',
    });
    snapshot.payments.push({
      orderId,
      status: fails ? 'FAILED' : story.cancelled ? 'REFUNDED' : 'COMPLETED',
    });
    const orderTypes = story.cancelled ? ['OrderCreated', 'OrderCancelled'] : ['OrderCreated'];
    const paymentTypes = [fails ? 'PaymentFailed' : 'PaymentCompleted'];
    if (story.cancelled && !fails) paymentTypes.push('PaymentRefunded');
    for (const type of orderTypes) {
      const row = emit(snapshot.orderOutbox, snapshot.orderTopic, orderId, type);
      snapshot.inbox.push({
        eventId: row.eventId,
        partitionKey: orderId,
        processed: true,
        dead: false,
      });
      snapshot.paymentHistory.push({ orderId, eventId: row.eventId, eventType: type });
    }
    for (const type of paymentTypes) {
      const row = emit(snapshot.paymentOutbox, snapshot.paymentTopic, orderId, type);
      snapshot.orderHistory.push({ orderId, eventId: row.eventId, eventType: type });
    }
  }
  return snapshot;
}

const stories = [
  { amount: 100, cancelled: false },
  { amount: 200, cancelled: true },
  { amount: 5000, cancelled: false },
  { amount: 6000, cancelled: true },
];
const check = (snapshot: SystemSnapshot) => evaluate(snapshot, { paymentLimit: limit }).violations;

describe('the invariants', () => {
  it('hold on a healthy system', () => {
    expect(check(healthy(stories))).toEqual([]);
  });

  it('see a double application behind an idempotent domain (no inbox or processed_event dedup)', () => {
    const inboxBroken = healthy(stories);
    const first = inboxBroken.paymentHistory[0];
    if (!first) throw new Error('no history');
    inboxBroken.paymentHistory.push(first);
    expect(check(inboxBroken)).toContainEqual(
      expect.stringMatching(/payment-service: order .* applied event .* 2 times/),
    );
    const dedupBroken = healthy(stories);
    const paid = dedupBroken.orderHistory[0];
    if (!paid) throw new Error('no history');
    dedupBroken.orderHistory.push(paid);
    expect(check(dedupBroken)).toContainEqual(
      expect.stringMatching(/order-service: order .* applied event .* 2 times/),
    );
  });

  it('see an inbox row stored twice, and one the sender never sent', () => {
    const snapshot = healthy(stories);
    const row = snapshot.inbox[0];
    if (!row) throw new Error('no inbox');
    snapshot.inbox.push(row, { ...row, eventId: uuid() });
    const violations = check(snapshot);
    expect(violations).toContainEqual(expect.stringMatching(/inbox: event .* stored 2 times/));
    expect(violations).toContainEqual(expect.stringMatching(/not in the order outbox/));
  });

  it('see events applied out of order, although each arrived', () => {
    const snapshot = healthy(stories);
    const [created, cancelled] = snapshot.paymentHistory.filter(
      (step) => step.orderId === snapshot.accepted[1]?.orderId,
    );
    if (!created || !cancelled) throw new Error('no history');
    snapshot.paymentHistory.splice(snapshot.paymentHistory.indexOf(created), 2, cancelled, created);
    expect(check(snapshot)).toContainEqual(expect.stringMatching(/out of order/));
  });

  it('count the events each order emitted: a second OrderCreated, a missing refund', () => {
    const snapshot = healthy(stories);
    const created = snapshot.orderOutbox[0];
    if (!created) throw new Error('no outbox');
    snapshot.orderOutbox.push({ ...created, id: 999n, eventId: uuid() });
    const refund = snapshot.paymentOutbox.findIndex((row) => row.eventType === 'PaymentRefunded');
    snapshot.paymentOutbox.splice(refund, 1);
    const violations = check(snapshot);
    expect(violations).toContainEqual(
      expect.stringMatching(/order outbox has 1 OrderCancelled|2 OrderCreated/),
    );
    expect(violations).toContainEqual(
      expect.stringMatching(
        /payment outbox has 1 PaymentCompleted, expected 1 PaymentCompleted, 1 PaymentRefunded/,
      ),
    );
  });

  it('see a message keyed other than its partition_key, and a key on two partitions', () => {
    const snapshot = healthy(stories);
    const message = snapshot.orderTopic[0];
    if (!message) throw new Error('no message');
    snapshot.orderTopic[0] = { ...message, key: message.eventId };
    const moved = snapshot.paymentTopic[0];
    if (!moved) throw new Error('no message');
    snapshot.paymentTopic.push({ ...moved, partition: 1, offset: '99' });
    const violations = check(snapshot);
    expect(violations).toContainEqual(expect.stringMatching(/keyed .* its partition_key is/));
    expect(violations).toContainEqual(expect.stringMatching(/on partitions 0 and 1/));
  });

  it('see a topic delivering a key’s events out of outbox order, a lost event and a phantom', () => {
    const snapshot = healthy(stories);
    const ofCancelled = snapshot.orderTopic.filter((m) => m.key === snapshot.accepted[1]?.orderId);
    const [first, second] = ofCancelled;
    if (!first || !second) throw new Error('no messages');
    snapshot.orderTopic.splice(snapshot.orderTopic.indexOf(first), 2, second, first);
    snapshot.paymentTopic.pop();
    snapshot.paymentTopic.push({
      partition: 0,
      offset: '77',
      key: 'x',
      eventId: uuid(),
      eventType: 'X',
    });
    const violations = check(snapshot);
    expect(violations).toContainEqual(expect.stringMatching(/delivered outbox #\d+ after #\d+/));
    expect(violations).toContainEqual(expect.stringMatching(/never reached the topic \(lost\)/));
    expect(violations).toContainEqual(expect.stringMatching(/on the topic but not in the outbox/));
  });

  it('see a phantom order, a lost write and a second payment', () => {
    const snapshot = healthy(stories);
    snapshot.orders.push({ id: uuid(), status: 'PENDING', paymentStatus: null });
    const accepted = snapshot.accepted[0];
    if (!accepted) throw new Error('no order');
    snapshot.payments.push({ orderId: accepted.orderId, status: 'COMPLETED' });
    snapshot.accepted.push({ orderId: uuid(), amount: 1, cancelled: false });
    const violations = check(snapshot);
    expect(violations).toContainEqual(expect.stringMatching(/never got a 201 \(phantom\)/));
    expect(violations).toContainEqual(expect.stringMatching(/has 2 payments/));
    expect(violations).toContainEqual(expect.stringMatching(/lost write/));
  });

  it('refuse a parked message the system wrote itself, and any parked message not injected', () => {
    const snapshot = healthy(stories);
    const ours = snapshot.orderOutbox[0]?.eventId;
    const parked = [
      {
        database: 'payments',
        consumer: 'payment-service',
        topic: 'order.events',
        partition: 0,
        offset: '1',
        reason: 'x',
        eventId: ours,
      },
      {
        database: 'payments',
        consumer: 'payment-service',
        topic: 'order.events',
        partition: 0,
        offset: '2',
        reason: 'y',
        eventId: undefined,
      },
    ] as const;
    const withParked = { ...snapshot, parked };
    expect(check(withParked)).toHaveLength(2);
    const injected = evaluate(withParked, {
      paymentLimit: limit,
      isInjectedGarbage: (entry) => entry.reason === 'y' || entry.reason === 'x',
    }).violations;
    // Garbage the scenario injected may be parked; an event of ours never.
    expect(injected).toEqual([expect.stringMatching(/parked a message .* \(event /)]);
  });

  it('see a dead or unprocessed inbox row and an unpublished outbox row', () => {
    const snapshot = healthy(stories);
    const [first, second] = snapshot.inbox;
    if (!first || !second) throw new Error('no inbox');
    snapshot.inbox[0] = { ...first, dead: true, processed: false };
    snapshot.inbox[1] = { ...second, processed: false };
    const row = snapshot.orderOutbox[2];
    if (!row) throw new Error('no outbox');
    snapshot.orderOutbox[2] = { ...row, published: false };
    const violations = check(snapshot);
    expect(violations).toContainEqual('1 dead inbox rows, expected 0');
    expect(violations).toContainEqual('1 inbox rows unprocessed');
    expect(violations).toContainEqual('1 outbox rows unpublished');
  });

  it('name why the first dead inbox row died, first of all', () => {
    const snapshot = healthy(stories);
    const [first] = snapshot.inbox;
    if (!first) throw new Error('no inbox');
    const error = 'duplicate key value violates unique constraint "payments_order_id_key"';
    snapshot.inbox[0] = { ...first, dead: true, processed: false, lastError: error };
    expect(check(snapshot)[0]).toBe(`1 dead inbox rows, expected 0 (last error: ${error})`);
  });

  it('see a duplicate storm beyond the redelivery limit, but not the copies a scenario injected', () => {
    const snapshot = healthy(stories);
    const first = snapshot.orderTopic[0];
    const second = snapshot.orderTopic[1];
    if (!first || !second) throw new Error('no messages');
    snapshot.orderTopic.push(first, first, first, second);
    const limited = (injectedCopies: Map<string, number>) =>
      evaluate(snapshot, { paymentLimit: limit, redeliveryLimit: 1, injectedCopies }).violations;
    expect(limited(new Map())).toEqual([
      expect.stringMatching(/order.events: 1 events delivered more than 2 times .* 4 times/),
    ]);
    expect(limited(new Map([[first.eventId, 2]]))).toEqual([]);
    expect(check(snapshot)).toEqual([]);
  });

  it('leave out the outbox rows a scenario wrote itself, unless one reached a topic', () => {
    const snapshot = healthy(stories);
    const refused = {
      id: 1000n,
      eventId: uuid(),
      eventType: 'Oversize',
      partitionKey: 'poison-1',
      published: true,
    };
    snapshot.orderOutbox.push(refused);
    const injected = {
      paymentLimit: limit,
      isInjectedOutboxRow: (row: OutboxEntry) => row === refused,
    };
    expect(check(snapshot)).toContainEqual(
      expect.stringMatching(/events of unknown order poison-1/),
    );
    expect(evaluate(snapshot, injected).violations).toEqual([]);
    snapshot.orderTopic.push({
      partition: 0,
      offset: '99',
      key: 'poison-1',
      eventId: refused.eventId,
      eventType: 'Oversize',
    });
    expect(evaluate(snapshot, injected).violations).toEqual([
      expect.stringMatching(/is on the topic but not in the outbox/),
    ]);
  });

  it('leave out the garbage a scenario produced to a topic, and only that', () => {
    const snapshot = healthy(stories);
    const garbage = { partition: 3, offset: '7', key: '', eventId: '', eventType: '' };
    snapshot.orderTopic.push(garbage, { ...garbage, offset: '8' });
    const violations = evaluate(snapshot, {
      paymentLimit: limit,
      isInjectedMessage: (at) => at.topic === 'order.events' && at.offset === '7',
    }).violations;
    expect(violations).toEqual([expect.stringMatching(/event {2}is on the topic but not/)]);
  });

  it('leave out what follows from events about an order the scenario invented, but not an order row', () => {
    const snapshot = healthy(stories);
    const invented = uuid();
    const created = { eventId: uuid(), eventType: 'OrderCreated' };
    const paid = { id: 2000n, eventId: uuid(), eventType: 'PaymentCompleted', published: true };
    snapshot.orderTopic.push({ partition: 0, offset: '90', key: invented, ...created });
    snapshot.inbox.push({
      eventId: created.eventId,
      partitionKey: invented,
      processed: true,
      dead: false,
    });
    snapshot.paymentHistory.push({ orderId: invented, ...created });
    snapshot.payments.push({ orderId: invented, status: 'COMPLETED' });
    snapshot.paymentOutbox.push({ ...paid, partitionKey: invented });
    snapshot.paymentTopic.push({
      partition: 0,
      offset: '91',
      key: invented,
      eventId: paid.eventId,
      eventType: paid.eventType,
    });
    expect(check(snapshot).length).toBeGreaterThanOrEqual(4);
    const injected = { paymentLimit: limit, isInjectedOrder: (id: string) => id === invented };
    expect(evaluate(snapshot, injected).violations).toEqual([]);
    // order-service must never have made the invented order real.
    snapshot.orders.push({ id: invented, status: 'PAID', paymentStatus: 'PAID' });
    expect(evaluate(snapshot, injected).violations).toContainEqual(
      expect.stringMatching(/phantom/),
    );
  });

  it('with short retention windows, read what was sent from the topics and still see a lost or repeated application', () => {
    const snapshot = healthy(stories);
    // Retention took every published outbox row and every processed inbox row.
    snapshot.orderOutbox = [];
    snapshot.paymentOutbox = [];
    snapshot.inbox = [];
    const shortRetention = {
      'order-service': ['outbox_event'],
      'payment-service': ['inbox_event'],
    };
    expect(check(snapshot).length).toBeGreaterThan(0);
    const expectations = { paymentLimit: limit, shortRetention };
    expect(evaluate(snapshot, expectations).violations).toEqual([]);

    const [first] = snapshot.paymentHistory;
    if (first === undefined) throw new Error('no application in the healthy snapshot');
    snapshot.paymentHistory.push(first);
    expect(evaluate(snapshot, expectations).violations).toEqual([
      expect.stringMatching(/payment-service: order .* applied event .* 2 times/),
    ]);
    snapshot.paymentHistory.pop();
    snapshot.paymentHistory.shift();
    expect(evaluate(snapshot, expectations).violations).toEqual([
      expect.stringMatching(/payment-service: order .* applied 0 of 1 events/),
    ]);
    snapshot.paymentHistory.unshift(first);
    expect(
      evaluate(snapshot, {
        ...expectations,
        shortRetention: { ...shortRetention, 'order-service': ['processed_event'] },
      }).violations,
    ).toEqual(['order-service: retention deleted no processed_event row']);
  });

  it('see a retention role that never completed a run, or never answered', () => {
    const snapshot = healthy(stories);
    snapshot.retentionRuns = [
      { service: 'order-service', completed: 0, deleted: {} },
      { service: 'payment-service', completed: undefined, deleted: {} },
    ];
    expect(check(snapshot)).toEqual([
      'order-service: the retention role completed no run',
      'payment-service: the retention role did not answer on /metrics',
    ]);
    expect(check({ ...snapshot, retentionRuns: [] })).toEqual(['no retention role ran']);
  });
});
