import { beforeAll, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kysely } from 'kysely';
import { startDedupConsumer, startInboxProcessor, startInboxWriter } from '../../src/index.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import {
  kafkaClient,
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('pg_restart');
let db: Kysely<EffectDb>;
beforeAll(async () => {
  db = await createEffectTable(testDb);
});

it('inbox writer, processor and dedup consumer ride out a PostgreSQL restart', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'pg-restart', 2);
  const logger = recordingLogger();
  const consumerOptions = {
    topics: [topic],
    sessionTimeoutMs: 10_000,
    backoff: { initialMs: 50, maxMs: 500 },
  };
  const writer = await startInboxWriter({
    db,
    kafka: kafkaClient(kafka),
    logger,
    options: { ...consumerOptions, groupId: `inbox-${topic}` },
  });
  const processor = startInboxProcessor<EffectDb>({
    db,
    logger,
    listen: { connectionString: testDb.url },
    options: { pollIntervalMs: 200, backoff: { initialMs: 50, maxMs: 500, multiplier: 2 } },
    handlers: {
      Ping: (trx, event) => recordEffect(trx, event, { source: 'inbox' }),
    },
  });
  const dedup = await startDedupConsumer<EffectDb>({
    db,
    kafka: kafkaClient(kafka),
    logger,
    options: { ...consumerOptions, groupId: `dedup-${topic}`, consumerName: 'pings' },
    handle: (trx, event) => recordEffect(trx, event, { source: 'dedup' }),
  });
  const send = (n: number) =>
    produce(
      kafka,
      topic,
      Array.from({ length: n }, (_, i) => eventMessage(`k${i % 4}`, 'Ping', { n: i })),
    );
  const effects = async (source: string) => count(testDb.db, `effect WHERE source = '${source}'`);

  await send(30);
  await pollUntil(async () => (await effects('inbox')) === 30 && (await effects('dedup')) === 30, {
    timeoutMs: 30_000,
    description: 'the first 30 events handled by both paths',
  });
  await stack().restart('postgres');
  await send(30);
  await pollUntil(async () => (await effects('inbox')) === 60 && (await effects('dedup')) === 60, {
    timeoutMs: 60_000,
    description: 'events sent after the restart handled by both paths',
  });
  await Promise.all([writer.stop(), processor.stop(), dedup.stop()]);
  expect(await count(testDb.db, 'inbox_event WHERE NOT processed')).toBe(0);
  expect(await count(testDb.db, 'parked_message')).toBe(0);
});
