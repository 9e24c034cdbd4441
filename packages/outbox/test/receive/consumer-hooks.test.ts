import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import { startDedupConsumer, startInboxWriter } from '../../src/index.ts';
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

const testDb = useTestDb('consumer_hooks');

/** The group's committed offset of partition 0 (-1: none yet). */
async function committedOffset(kafka: Kafka, groupId: string, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return Number(entry?.partitions.find((p) => p.partition === 0)?.offset ?? -1);
  } finally {
    await admin.disconnect();
  }
}

const inboxRows = (eventIds: readonly string[]) =>
  count(testDb.db, `inbox_event WHERE event_id IN ('${eventIds.join("','")}')`);

it('the inbox writer calls beforeStore with nothing stored and beforeCommitOffset with the rows committed and the offset not', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'hooks-inbox', 1);
  const groupId = `hooks-inbox-${topic}`;
  const seen: { at: string; rows: number; offset: number }[] = [];
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { groupId, topics: [topic], sessionTimeoutMs: 10_000 },
    hooks: {
      beforeStore: async ({ eventIds }) => {
        seen.push({
          at: 'beforeStore',
          rows: await inboxRows(eventIds),
          offset: await committedOffset(kafka, groupId, topic),
        });
      },
      beforeCommitOffset: async ({ eventIds }) => {
        seen.push({
          at: 'beforeCommitOffset',
          rows: await inboxRows(eventIds),
          offset: await committedOffset(kafka, groupId, topic),
        });
      },
    },
  });
  await produce(kafka, topic, [eventMessage('o-1', 'OrderCreated', { orderId: 'o-1' })]);
  await pollUntil(() => seen.length >= 2, { timeoutMs: 30_000, description: 'both hooks' });
  await writer.stop();
  expect(seen).toEqual([
    { at: 'beforeStore', rows: 0, offset: -1 },
    { at: 'beforeCommitOffset', rows: 1, offset: -1 },
  ]);
  expect(await committedOffset(kafka, groupId, topic)).toBe(1);
});

it('the dedup consumer calls afterApply once the effect and its processed_event row committed, before the offset commit', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'hooks-dedup', 1);
  const groupId = `hooks-dedup-${topic}`;
  const message = eventMessage('o-2', 'PaymentCompleted', { orderId: 'o-2' });
  const seen: { eventId: string; dedupRows: number; offset: number }[] = [];
  const consumer = await startDedupConsumer({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { groupId, topics: [topic], consumerName: 'hooks', sessionTimeoutMs: 10_000 },
    handle: async () => undefined,
    hooks: {
      afterApply: async ({ eventId }) => {
        seen.push({
          eventId,
          dedupRows: await count(
            testDb.db,
            `processed_event WHERE consumer = 'hooks' AND event_id = '${eventId}'`,
          ),
          offset: await committedOffset(kafka, groupId, topic),
        });
      },
    },
  });
  // The second copy is a repeat: dropped by processed_event, no afterApply for it.
  await produce(kafka, topic, [message, message]);
  await pollUntil(async () => (await committedOffset(kafka, groupId, topic)) === 2, {
    timeoutMs: 30_000,
    description: 'both messages consumed',
  });
  await consumer.stop();
  expect(seen).toEqual([{ eventId: message.eventId, dedupRows: 1, offset: -1 }]);
});
