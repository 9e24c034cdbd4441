import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  createKafka,
  createTopic,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('relay_crash');

const childScript = fileURLToPath(new URL('../fixtures/relay-child.ts', import.meta.url));

it('a relay SIGKILLed between the Kafka ack and the commit leaves its batch to be republished', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'relay-crash', 2);
  const events: OutboxEventInput[] = Array.from({ length: 60 }, (_, i) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: `order-${i % 6}`,
    topic,
    partitionKey: `order-${i % 6}`,
    payload: { i },
  }));
  const { eventIds } = await testDb.db.transaction().execute((trx) => enqueueMany(trx, events));

  const child = spawn(process.execPath, [childScript], {
    env: {
      ...process.env,
      DATABASE_URL: testDb.url,
      KAFKA_BROKERS: stack().kafkaBrokers.join(','),
      BATCH_SIZE: '25',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, exitSignal) => resolve(exitSignal)),
  );
  expect(signal, stderr).toBe('SIGKILL');
  const acked = /ACKED (\S+)/.exec(stdout)?.[1]?.split(',') ?? [];
  expect(acked).toHaveLength(25);

  // Kafka has the batch, yet the database does not say so: the transaction died with the process.
  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => new Set(collected.messages.map((m) => m.eventId)).size >= 25, {
    timeoutMs: 20_000,
    description: 'the acked batch on the topic',
  });
  const published = await testDb.db
    .selectFrom('outbox_event')
    .select('event_id')
    .where('published_at', 'is not', null)
    .execute();
  expect(published).toEqual([]);

  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { batchSize: 25, pollIntervalMs: 100 },
  });
  await pollUntil(() => new Set(collected.messages.map((m) => m.eventId)).size >= 60, {
    timeoutMs: 30_000,
    description: 'all 60 events on the topic',
  });
  await relay.stop();
  await collected.stop();

  const expected = new Map<string, string[]>();
  events.forEach((event, i) => {
    const list = expected.get(event.partitionKey) ?? [];
    list.push(eventIds[i] ?? '');
    expected.set(event.partitionKey, list);
  });
  const result = checkOrder(collected.messages, expected);
  // Exactly the batch that was acked but not committed went out twice.
  expect(result).toEqual({ duplicates: 25, outOfOrder: [], missing: 0 });
  const unpublished = await testDb.db
    .selectFrom('outbox_event')
    .select('id')
    .where('published_at', 'is', null)
    .execute();
  expect(unpublished).toEqual([]);
});
