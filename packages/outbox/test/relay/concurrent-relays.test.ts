import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Registry } from 'prom-client';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  createKafka,
  createTopic,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('relays');

const WRITERS = 4;
const TRANSACTIONS_PER_WRITER = 25;
const EVENTS_PER_TRANSACTION = 100;

it('three relays publish 10k events on hot and cold keys once each, in per-key order', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relays', 3);
  const collected = await collectTopic(kafka, topic);
  const relays = await Promise.all(
    [1, 2, 3].map(async (n) => {
      const registry = new Registry();
      const metrics = createOutboxMetrics(registry);
      const worker = await startRelay({
        db: testDb.db,
        kafka: kafkaClient(kafka),
        logger: recordingLogger(),
        metrics,
        listen: { connectionString: testDb.url },
        options: { batchSize: 200, pollIntervalMs: 200, clientId: `relay-${n}` },
      });
      return { worker, metrics };
    }),
  );

  // Each writer owns one hot key (writes of one aggregate are serialised, as a row lock
  // would do in a service) and a stream of cold keys; writers and relays run concurrently.
  const writer = async (w: number): Promise<void> => {
    for (let t = 0; t < TRANSACTIONS_PER_WRITER; t++) {
      const events: OutboxEventInput[] = [];
      for (let i = 0; i < EVENTS_PER_TRANSACTION; i++) {
        const hot = i % 5 < 3;
        const key = hot ? `hot-${w}` : `cold-${w}-${t}-${i}`;
        events.push({
          eventType: 'Tick',
          aggregateType: 'counter',
          aggregateId: key,
          topic,
          partitionKey: key,
          payload: { w, t, i },
        });
      }
      await testDb.db.transaction().execute((trx) => enqueueMany(trx, events));
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
  const total = WRITERS * TRANSACTIONS_PER_WRITER * EVENTS_PER_TRANSACTION;

  await pollUntil(() => new Set(collected.messages.map((m) => m.eventId)).size >= total, {
    timeoutMs: 90_000,
    intervalMs: 250,
    description: `${total} distinct events on the topic`,
  });
  await Promise.all(relays.map((relay) => relay.worker.stop()));
  await collected.stop();

  const rows = await testDb.db
    .selectFrom('outbox_event')
    .select(['event_id', 'partition_key', 'published_at'])
    .orderBy('id')
    .execute();
  expect(rows).toHaveLength(total);
  expect(rows.filter((row) => row.published_at === null)).toHaveLength(0);
  const expected = new Map<string, string[]>();
  for (const row of rows) {
    const list = expected.get(row.partition_key) ?? [];
    list.push(row.event_id);
    expected.set(row.partition_key, list);
  }
  const result = checkOrder(collected.messages, expected);
  expect(result).toEqual({ duplicates: 0, outOfOrder: [], missing: 0 });
  expect(collected.messages).toHaveLength(total);

  const perRelay = await Promise.all(
    relays.map(async (relay) => (await relay.metrics.publishedTotal.get()).values[0]?.value ?? 0),
  );
  expect(perRelay.reduce((a, b) => a + b, 0)).toBe(total);
  console.log(`published per relay: ${perRelay.join(', ')}`);
});
