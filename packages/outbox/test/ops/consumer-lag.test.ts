import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { startInboxWriter } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('lag');

/** Sum of `kafka_consumer_lag` over the group's partitions, once every partition has a value. */
function lagOf(scrape: string, group: string, partitions: number): number | undefined {
  const values = [...scrape.matchAll(/^kafka_consumer_lag\{([^}]*)\} (\d+)$/gm)]
    .filter(([, labels]) => labels?.includes(`group="${group}"`))
    .map(([, , value]) => Number(value));
  return values.length === partitions ? values.reduce((a, b) => a + b, 0) : undefined;
}

it('exports the consumer lag per partition: it grows while the writer cannot store, and drains to 0', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'lag', 2);
  const groupId = `payments-${topic}`;
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, undefined, { consumerLag: { cacheMs: 100 } });
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: { groupId, topics: [topic] },
  });
  try {
    await pollUntil(async () => lagOf(await registry.metrics(), groupId, 2) === 0, {
      timeoutMs: 30_000,
      description: 'lag 0 on both partitions of the empty topic',
    });
    // Another session holds the table: nothing is stored, nothing committed.
    await testDb.db.transaction().execute(async (trx) => {
      await sql`LOCK TABLE inbox_event IN ACCESS EXCLUSIVE MODE`.execute(trx);
      await produce(
        kafka,
        topic,
        Array.from({ length: 7 }, (_, i) => eventMessage(`order-${i}`, 'OrderCreated', { i })),
      );
      await pollUntil(async () => lagOf(await registry.metrics(), groupId, 2) === 7, {
        timeoutMs: 30_000,
        description: 'a lag of 7 while the writer is blocked',
      });
    });
    await pollUntil(async () => lagOf(await registry.metrics(), groupId, 2) === 0, {
      timeoutMs: 30_000,
      description: 'the lag to drain once the writer stores again',
    });
  } finally {
    await writer.stop();
  }
  // A stopped consumer no longer reports.
  expect(lagOf(await registry.metrics(), groupId, 2)).toBeUndefined();
});

it('a scrape does not fail or hang while Kafka cannot be reached', async () => {
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, undefined, { consumerLag: { timeoutMs: 500 } });
  // Nothing listens on port 1.
  const unreachable = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
  const unwatch = metrics.consumerLag.watch(kafkaClient(unreachable), 'lost-group', ['some-topic']);
  try {
    for (let i = 0; i < 3; i++) {
      const scrape = await registry.metrics();
      expect(scrape).toContain('# TYPE kafka_consumer_lag gauge');
      expect(scrape).not.toContain('group="lost-group"');
    }
  } finally {
    await unwatch();
  }
});
