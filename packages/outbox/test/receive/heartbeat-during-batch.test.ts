import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Admin } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { startDedupConsumer, startInboxWriter } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

// The broker's smallest session timeout; the work below takes half as long again.
const SESSION_TIMEOUT_MS = 6000;
const LONG_WORK_SECONDS = 9;

const testDb = useTestDb('heartbeat');

/** The member id of the group's only member once the group is stable. */
async function onlyMember(admin: Admin, groupId: string): Promise<string> {
  return pollUntil(
    async () => {
      const { groups } = await admin.describeGroups([groupId]);
      const group = groups[0];
      return group?.state === 'Stable' && group.members.length === 1 && group.members[0]?.memberId;
    },
    { timeoutMs: 30_000, description: `group ${groupId} to be stable with one member` },
  );
}

it('a dedup consumer whose handler outlasts the session timeout stays in the group: no eviction, no redelivery', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'heartbeat-dedup', 1);
  const groupId = `orders-${topic}`;
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry);
  const slow = eventMessage('order-1', 'Slow', {});
  const calls: string[] = [];
  const admin = kafka.admin();
  await admin.connect();
  const consumer = await startDedupConsumer({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: {
      groupId,
      topics: [topic],
      consumerName: 'heartbeat',
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
    },
    handle: async (trx, event) => {
      calls.push(event.eventId);
      if (event.eventId === slow.eventId) {
        await sql`SELECT pg_sleep(${LONG_WORK_SECONDS})`.execute(trx);
      }
    },
  });
  try {
    const member = await onlyMember(admin, groupId);
    await produce(kafka, topic, [slow, eventMessage('order-2', 'Fast', {})]);
    await pollUntil(() => calls.length >= 2, {
      timeoutMs: 60_000,
      description: 'both events handled',
    });
    expect(await onlyMember(admin, groupId)).toBe(member);
    expect(calls.filter((id) => id === slow.eventId)).toHaveLength(1);
    expect(await registry.metrics()).not.toMatch(
      /^processed_event_duplicates_total\{[^}]*\} [1-9]/m,
    );
  } finally {
    await consumer.stop();
    await admin.disconnect();
  }
});

it('an inbox writer whose INSERT waits longer than the session timeout stays in the group: no eviction, no redelivery', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'heartbeat-inbox', 1);
  const groupId = `payments-${topic}`;
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry);
  const admin = kafka.admin();
  await admin.connect();
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: { groupId, topics: [topic], sessionTimeoutMs: SESSION_TIMEOUT_MS },
  });
  try {
    const member = await onlyMember(admin, groupId);
    // Another session holds the table, so the writer's INSERT waits on it.
    const locked = testDb.db.transaction().execute(async (trx) => {
      await sql`LOCK TABLE inbox_event IN ACCESS EXCLUSIVE MODE`.execute(trx);
      await produce(kafka, topic, [eventMessage('order-1', 'OrderCreated', {})]);
      await sql`SELECT pg_sleep(${LONG_WORK_SECONDS})`.execute(trx);
    });
    await locked;
    await pollUntil(async () => (await count(testDb.db, 'inbox_event')) === 1, {
      timeoutMs: 30_000,
      description: 'the event stored once the lock is gone',
    });
    expect(await onlyMember(admin, groupId)).toBe(member);
    expect(await registry.metrics()).toMatch(/^inbox_duplicates_dropped_total 0$/m);
  } finally {
    await writer.stop();
    await admin.disconnect();
  }
});
