import { randomUUID } from 'node:crypto';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerCdcRelay, removeCdcRelay, type CdcRelayDeps } from '../../src/cdc.ts';
import {
  enqueue,
  silentLogger,
  type OutboxEventInput,
  type OutboxTables,
} from '../../src/index.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { publishBatch } from '../../src/relay/publish-batch.ts';
import { kafkaClient, createKafka, createTopic, stack, useTestDb } from '../support/harness.ts';

/** A message as a consumer sees it: the bytes of its key, value and headers, and where it went. */
interface Copy {
  readonly eventId: string;
  readonly partition: number;
  readonly key: string;
  readonly value: string;
  readonly headers: readonly (readonly [string, string])[];
}

const testDb = useTestDb('cdc_same');
let kafka: Kafka;
let topic: string;
let cdc: CdcRelayDeps<OutboxTables>;

beforeAll(async () => {
  await stack().addServer('connect');
  kafka = createKafka('cdc-same');
  topic = await createTopic(kafka, 'cdc-same', 3);
  cdc = {
    db: testDb.db,
    kafka: kafkaClient(kafka),
    connectUrl: stack().connectUrl,
    // A random name may start with `-` or a digit: the connector's name is ours, not a flag.
    connector: { name: `same-${randomUUID()}`, databaseUrl: testDb.url },
    logger: silentLogger,
  };
}, 240_000);

afterAll(async () => {
  if (cdc) await removeCdcRelay(cdc);
}, 60_000);

/** Events whose messages exercise what could differ: unicode, nesting, numbers, own headers. */
function eventsOf(key: string, n: number): OutboxEventInput {
  return {
    eventType: n % 2 === 0 ? 'OrderCreated' : 'OrderCancelled',
    aggregateType: 'order',
    aggregateId: key,
    topic,
    partitionKey: key,
    payload: {
      n,
      total: 12.5 * n,
      note: 'zß水🚀 "quoted" \\ back\nslash',
      nested: { list: [1, 'two', null, true], empty: {} },
    },
    headers: {
      traceparent: `00-${randomUUID().replaceAll('-', '')}-${randomUUID().slice(0, 16).replaceAll('-', '0')}-01`,
      'x-tenant': `tenant-${n % 3}`,
    },
  };
}

async function enqueueEach(keys: readonly string[], perKey: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < perKey; n++) {
    for (const key of keys) {
      const { eventId } = await testDb.db
        .transaction()
        .execute((trx) => enqueue(trx, eventsOf(key, n)));
      ids.push(eventId);
    }
  }
  return ids;
}

function toCopy(message: KafkaMessage, partition: number): Copy {
  const headers = Object.entries(message.headers ?? {})
    .map(([name, value]) => [name, String(value)] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  return {
    eventId: String(message.headers?.['event_id'] ?? ''),
    partition,
    key: message.key?.toString('utf8') ?? '',
    value: message.value?.toString('utf8') ?? '',
    headers,
  };
}

it('a consumer gets the same key, partition, headers and payload bytes from the CDC relay as from the polling relay', async () => {
  const copies: Copy[] = [];
  const consumer = kafka.consumer({ groupId: `cdc-same-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message, partition }) => {
      copies.push(toCopy(message, partition));
    },
  });
  try {
    // Before the connector exists: two rows to publish, one the polling relay already published.
    const keys = ['order-a', 'order-b', '-order-c'];
    const before = await enqueueEach(keys, 1);
    const published = await testDb.db
      .transaction()
      .execute((trx) => enqueue(trx, eventsOf('order-published', 0)));
    await sql`UPDATE outbox_event SET published_at = now() WHERE event_id = ${published.eventId}`.execute(
      testDb.db,
    );

    await registerCdcRelay(cdc);
    const after = await enqueueEach(keys, 3);
    const all = [...before, ...after];
    const copiesOf = (eventId: string) => copies.filter((copy) => copy.eventId === eventId);

    // The CDC relay alone: every unpublished row once (the snapshot, then the stream), in
    // order per key, and not the row that was already published.
    await pollUntil(() => all.every((id) => copiesOf(id).length >= 1), {
      timeoutMs: 60_000,
      description: 'every event from the CDC relay',
    });
    expect(all.map((id) => copiesOf(id).length)).toEqual(all.map(() => 1));
    for (const key of keys) {
      const expected = all.filter((id) => copiesOf(id)[0]?.key === key);
      const onTopic = copies.filter((copy) => copy.key === key).map((copy) => copy.eventId);
      expect(onTopic, key).toEqual(expected);
    }

    // The polling relay publishes the same rows again (published_at is not set in CDC mode).
    const producer = kafkaClient(kafka).createProducer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      const { published: sent } = await publishBatch({
        db: testDb.db,
        producer,
        options: { ...DEFAULT_RELAY_OPTIONS, batchSize: 100 },
      });
      expect(sent).toBe(all.length);
    } finally {
      await producer.disconnect();
    }
    await pollUntil(() => all.every((id) => copiesOf(id).length >= 2), {
      timeoutMs: 30_000,
      description: 'every event from the polling relay too',
    });

    for (const id of all) {
      const [fromCdc, fromPolling] = copiesOf(id);
      expect(fromCdc, id).toBeDefined();
      expect(fromPolling, id).toEqual(fromCdc);
    }
    expect(copiesOf(published.eventId)).toEqual([]);
    // The headers are the relay's: the row's own, then the standard ones, nothing else.
    expect(copiesOf(all[0] ?? '')[0]?.headers.map(([name]) => name)).toEqual([
      'aggregate_id',
      'aggregate_type',
      'event_id',
      'event_type',
      'occurred_at',
      'traceparent',
      'x-tenant',
    ]);
  } finally {
    await consumer.disconnect();
  }
}, 180_000);
