import { skipFailedOutboxEvents } from '@outbox-inbox/outbox/ops';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import {
  operatorDb,
  operatorFindings,
  type OperatorFindings,
} from '../src/poison/operator-view.ts';
import { poisonCorpus } from '../src/poison/poison-messages.ts';
import { landedKey, poisonProblems } from '../src/poison/poison-findings.ts';
import {
  copiesOfPublished,
  insertPoisonRows,
  type PoisonRow,
} from '../src/poison/poison-outbox.ts';
import { openRawProducer, type Landed } from '../src/poison/produce-poison.ts';
import { unknownOrderEvents, unknownOrderProblems } from '../src/poison/unknown-order-events.ts';
import { runScenario, traffic } from '../src/scenario.ts';
import { sampleStalls, type StallSighting } from '../src/stall-sampler.ts';

it('poison data under load: refused outbox rows set aside, garbage parked as raw bytes, no storm, no stall; every order settles', async () => {
  const corpus = poisonCorpus();
  const strangers = unknownOrderEvents();
  let landed: Landed[] = [];
  let strangersLanded: Landed[] = [];
  let poisonRows: PoisonRow[] = [];
  const injectedCopies = new Map<string, number>();
  let found: OperatorFindings = { failed: [], parked: [], signals: {} };
  let stalls: readonly StallSighting[] = [];

  const result = await runScenario('8 poison data', {
    system: { settings: { WORKER_STALL_AFTER_MS: '10000' } },
    expect: {
      isInjectedGarbage: (entry) => new Set(landed.map(landedKey)).has(landedKey(entry)),
      isInjectedMessage: (at) => new Set(landed.map(landedKey)).has(landedKey(at)),
      isInjectedOutboxRow: (row) => poisonRows.some((poison) => poison.eventId === row.eventId),
      // Nothing here kills a relay: one resend (a send that timed out) at most, never a storm.
      redeliveryLimit: 1,
      injectedCopies,
      isInjectedOrder: (orderId) =>
        orderId === strangers.createdFor || orderId === strangers.paidFor,
    },
    // Valid events about invented orders are events, not garbage: taken, never parked.
    checkSettled: (system) => unknownOrderProblems(system, strangers, strangersLanded),
    inject: async (context) => {
      const { system, fault } = context;
      const sampler = sampleStalls(system);
      // Its JVM starts while the first orders flow.
      const javaProducer = openRawProducer(system.stack.kafkaBrokers);
      try {
        await traffic(context, 2);
        poisonRows = await insertPoisonRows(system.orderDb);
        fault(`outbox rows Kafka refuses: ${poisonRows.map((row) => row.name).join(', ')}`);
        landed = await javaProducer.produce(corpus);
        fault(
          `${corpus.length} poison messages on both topics: ${corpus.map((m) => m.name).join(', ')}`,
        );
        strangersLanded = await javaProducer.produce(strangers.messages);
        fault('valid OrderCreated and PaymentCompleted about orders that do not exist');
        const copies = [
          ...(await copiesOfPublished(system.orderDb, 3)),
          ...(await copiesOfPublished(system.paymentDb, 3)),
        ];
        await javaProducer.produce(copies);
        await javaProducer.close();
        for (const { eventId } of copies)
          injectedCopies.set(eventId, (injectedCopies.get(eventId) ?? 0) + 1);
        fault(`${copies.length} copies of published events`);

        // What the operator sees while the poison sits there and orders keep flowing.
        found = await operatorFindings(system, { rows: poisonRows, corpus, landed });
        await traffic(context, 3);
        // The runbook's way out: the rows cannot be sent as they are, so they are skipped.
        const skipped = await skipFailedOutboxEvents(
          operatorDb(system.orderDb),
          found.failed.map((row) => row.eventId),
        );
        fault(`operator skipped ${skipped} failed outbox rows`);
        await traffic(context, 2);
      } finally {
        await javaProducer.close().catch(() => undefined);
        await sampler.stop();
        stalls = sampler.sightings();
      }
    },
  });

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  // Each refused row set aside with its reason, where `listFailedOutboxEvents` shows it.
  for (const row of poisonRows) {
    const failed = found.failed.find((candidate) => candidate.eventId === row.eventId);
    expect(failed?.lastError, row.name).toMatch(row.reason);
    expect(failed?.waitingBehind, row.name).toBe(0);
  }
  // Each poison message parked once, with its reason and its bytes, where `readParkedMessages` shows it.
  expect(poisonProblems(corpus, landed, found.parked)).toEqual([]);
  const nulHeader = found.parked.find((row) => row.headers.some((h) => h.name === 'traceparent'));
  expect(nulHeader?.headers.find((h) => h.name === 'traceparent')?.value).toEqual(
    Buffer.from('a\u0000b'),
  );
  // The metrics show it; readiness does not flag it (nothing is stuck), and no worker stalled.
  const onOrderTopic = corpus.filter((m) => m.topic === 'order.events').length;
  expect(found.signals).toMatchObject({
    'order outbox_failed_events': poisonRows.length,
    'payment parked_messages': onOrderTopic,
    'order parked_messages': corpus.length - onOrderTopic,
    'order-relay ready': 'ok',
    'payment-consumer ready': 'ok',
  });
  expect(found.signals['order-relay outbox_publish_refused_total']).toBeGreaterThanOrEqual(
    poisonRows.length,
  );
  expect(stalls).toEqual([]);
  // The injected copies were delivered and dropped by each receiver's dedup.
  expect(result.counts.duplicatesDroppedByInbox).toBeGreaterThanOrEqual(3);
  expect(result.counts.duplicatesDroppedByDedup).toBeGreaterThanOrEqual(3);
});
