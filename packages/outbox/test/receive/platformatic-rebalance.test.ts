import { Consumer, consumerGroupChannel, consumerReceivesChannel } from '@platformatic/kafka';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { AssignerProtocol } from 'kafkajs';
import { sql } from 'kysely';
import { startInboxWriter } from '../../src/index.ts';
import { platformaticClient } from '../../src/platformatic.ts';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('pf_rebalance');

// Long polls: a fetch sent before the rebalance is still waiting for data when it ends.
const MAX_WAIT_TIME_MS = 20_000;
const SESSION_TIMEOUT_MS = 6000;

/** A gate a batch handler waits at until the test opens it. */
function gate(): { readonly opened: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * One member: ten messages from `heldFrom` on in a batch held in progress, the next ten read
 * ahead into its stream, a fetch in flight; a second member joins and leaves (the first keeps
 * the partition); then ten more. Every offset must be stored once, in order.
 */
async function rebalanceWithFetchInFlight(heldFrom: 0 | 10): Promise<void> {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'pf-rebalance', 1);
  const groupId = `payments-${topic}`;
  const last = heldFrom + 29;
  const messages = Array.from({ length: last + 1 }, (_, n) =>
    eventMessage('order-1', 'Step', { n }),
  );
  const batchOf = (from: number, to: number) => messages.slice(from, to);
  const held = gate();
  let holding = false;
  let heldBatch = false;
  // The member under test and a second one that joins and leaves: real clients, real group.
  const intruder = new Consumer({
    clientId: 'intruder',
    bootstrapBrokers: [...stack().kafkaBrokers],
    groupId,
    sessionTimeout: SESSION_TIMEOUT_MS,
    rebalanceTimeout: 30_000,
    heartbeatInterval: 500,
  });
  // Records the client pushed into the member's stream (fetched, read ahead or not).
  let received = 0;
  const onReceive = (message: unknown): void => {
    if ((message as { client?: unknown }).client !== intruder) received += 1;
  };
  // The member's rejoin begins: its batch in progress goes on, and it reads on, while the
  // join is under way.
  const onGroup = (message: unknown): void => {
    const context = message as { client?: unknown; operation?: unknown };
    if (holding && context.client !== intruder && context.operation === 'joinGroup') {
      holding = false;
      held.open();
    }
  };
  consumerReceivesChannel.start.subscribe(onReceive);
  consumerGroupChannel.start.subscribe(onGroup);
  const admin = kafka.admin();
  await admin.connect();
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: platformaticClient({
      clientId: 'member',
      brokers: stack().kafkaBrokers,
      timeoutMs: MAX_WAIT_TIME_MS + 10_000,
    }),
    logger: recordingLogger(),
    options: {
      groupId,
      topics: [topic],
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      maxWaitTimeMs: MAX_WAIT_TIME_MS,
    },
    hooks: {
      async beforeStore(info) {
        if (!info.eventIds.includes(messages[heldFrom]?.eventId ?? '') || heldBatch) return;
        heldBatch = true;
        await held.opened;
      },
    },
  });
  try {
    if (heldFrom > 0) {
      // Offsets before the held batch stored and committed.
      await produce(kafka, topic, batchOf(0, heldFrom));
      const stored = `inbox_event WHERE topic = '${topic}'`;
      await pollUntil(async () => (await count(testDb.db, stored)) === heldFrom, {
        timeoutMs: 30_000,
        description: 'the events before the held batch stored',
      });
    }
    // A batch held in progress; the next ten read ahead into the stream; the next fetch in
    // flight, waiting for data.
    await produce(kafka, topic, batchOf(heldFrom, heldFrom + 10));
    await pollUntil(() => heldBatch, { timeoutMs: 30_000, description: 'a batch held' });
    await produce(kafka, topic, batchOf(heldFrom + 10, heldFrom + 20));
    await pollUntil(() => received >= heldFrom + 20, {
      timeoutMs: 30_000,
      description: 'ten messages read ahead into the stream',
    });
    // A rebalance: the intruder joins (the member rejoins; its held batch goes on), then
    // leaves (the member, alone, owns the partition again).
    holding = true;
    await intruder.joinGroup({
      sessionTimeout: SESSION_TIMEOUT_MS,
      rebalanceTimeout: 30_000,
      heartbeatInterval: 500,
    });
    await intruder.leaveGroup();
    await pollUntil(
      async () => {
        const { groups } = await admin.describeGroups([groupId]);
        const group = groups[0];
        if (group?.state !== 'Stable' || group.members.length !== 1) return false;
        const only = group.members[0];
        if (only === undefined) return false;
        const owned = AssignerProtocol.MemberAssignment.decode(only.memberAssignment);
        return owned?.assignment[topic]?.includes(0) === true;
      },
      { timeoutMs: 30_000, description: 'the member alone to own the partition again' },
    );
    // Now the fetch sent before the rebalance gets its answer.
    await produce(kafka, topic, batchOf(heldFrom + 20, heldFrom + 30));
    const storedInOrder = async (): Promise<number[]> =>
      (
        await sql<{ n: number }>`
          SELECT (payload->>'n')::int AS n FROM inbox_event WHERE topic = ${topic}
          ORDER BY seq`.execute(testDb.db)
      ).rows.map((row) => row.n);
    await pollUntil(async () => (await storedInOrder()).includes(last), {
      timeoutMs: 45_000,
      description: 'the last event stored',
    });
    // Every offset once, in offset order (seq follows the key's order): none skipped.
    expect(await storedInOrder()).toEqual(messages.map((_, n) => n));
  } finally {
    held.open();
    consumerReceivesChannel.start.unsubscribe(onReceive);
    consumerGroupChannel.start.unsubscribe(onGroup);
    await writer.stop();
    await intruder.close(true).catch(() => undefined);
    await admin.disconnect();
  }
}

it('a @platformatic/kafka member that keeps its partition across a rebalance, with a fetch in flight and read-ahead messages, stores every offset once and in order', () =>
  rebalanceWithFetchInFlight(10));

it('the same on a partition the group never committed: the member reads it again from the first offset it read', () =>
  rebalanceWithFetchInFlight(0));
