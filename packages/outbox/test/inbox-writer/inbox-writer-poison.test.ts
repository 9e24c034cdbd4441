import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Message } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { startInboxProcessor, startInboxWriter } from '../../src/index.ts';
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
import { OVERSIZED_TOPIC_CONFIG, oversizedPayloads } from '../support/oversized-payloads.ts';
import { createConfiguredTopic } from '../support/topics.ts';

const testDb = useTestDb('inbox_poison');

/** `message` with one header replaced or added. */
function withHeader(message: Message, name: string, value: Buffer | string | undefined): Message {
  return { ...message, headers: { ...message.headers, [name]: value } };
}

it('parks what PostgreSQL cannot store, raw bytes and reason, and stores the rest of the batch', async () => {
  const kafka = createKafka();
  // One partition: on it, one stuck message holds back every later one.
  const topic = await createTopic(kafka, 'inbox-poison', 1);
  const registry = new Registry();
  const metrics = createOutboxMetrics(registry, testDb.db);
  const groupId = `payments-${topic}`;

  const before = Array.from({ length: 5 }, (_, i) =>
    eventMessage(`order-${i}`, 'OrderCreated', { i }),
  );
  const after = Array.from({ length: 5 }, (_, i) =>
    eventMessage(`order-${i}`, 'OrderCreated', { i: 10 + i }),
  );
  // Valid headers, a payload that passes the schema, plus a NUL: jsonb refuses \u0000.
  const nulInPayload = {
    ...eventMessage('order-1', 'OrderCreated', {}),
    value: '{"i":100,"note":"\\u0000"}',
  };
  const loneSurrogate = {
    ...eventMessage('order-2', 'OrderCreated', {}),
    value: '{"i":101,"note":"\\ud800"}',
  };
  const nulInHeader = withHeader(
    eventMessage('order-3', 'OrderCreated', { i: 102 }),
    'traceparent',
    'a\u0000b',
  );
  // Rejected by validation, and its header still has to be parked as it is.
  const nulInEventType = withHeader(
    eventMessage('order-4', 'OrderCreated', { i: 103 }),
    'event_type',
    'Order\u0000Created',
  );
  const badUtf8Header = withHeader(
    eventMessage('order-0', 'OrderCreated', { i: 104 }),
    'traceparent',
    Buffer.from([0x30, 0xff, 0xfe]),
  );
  const badUtf8Value = {
    ...eventMessage('order-1', 'OrderCreated', {}),
    value: Buffer.concat([
      Buffer.from('{"i":105,"note":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ]),
  };
  // An index row larger than a btree page allows (random text does not compress).
  const hugeKey = {
    ...eventMessage('k', 'OrderCreated', { i: 106 }),
    key: randomBytes(12_000).toString('hex'),
  };
  const poison = [
    nulInPayload,
    loneSurrogate,
    nulInHeader,
    nulInEventType,
    badUtf8Header,
    badUtf8Value,
    hugeKey,
  ];
  await produce(kafka, topic, [...before, ...poison, ...after]);

  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    metrics,
    options: {
      groupId,
      topics: [topic],
      validate: (event) =>
        event.eventType === 'OrderCreated' ? undefined : `unknown event type ${event.eventType}`,
    },
  });
  const good = [...before, ...after];
  await pollUntil(
    async () =>
      (await count(testDb.db, 'inbox_event')) === good.length &&
      (await count(testDb.db, 'parked_message')) === poison.length,
    {
      timeoutMs: 30_000,
      description: `${good.length} inbox rows and ${poison.length} parked messages`,
    },
  );
  const stored = await testDb.db
    .selectFrom('inbox_event')
    .select(['event_id'])
    .orderBy('seq')
    .execute();
  expect(stored.map((row) => row.event_id)).toEqual(good.map((m) => m.eventId));

  const parked = await sql<{
    kafka_offset: string;
    message_key: Buffer | null;
    message_value: Buffer | null;
    header_names: Buffer[];
    header_values: (Buffer | null)[];
    reason: string;
  }>`SELECT kafka_offset, message_key, message_value, header_names, header_values, reason
     FROM parked_message ORDER BY kafka_offset::bigint`.execute(testDb.db);
  const byValue = (message: Message) =>
    parked.rows.find((row) => row.message_value?.equals(Buffer.from(message.value ?? '')));
  const header = (row: (typeof parked.rows)[number] | undefined, name: string) =>
    row?.header_values[row.header_names.findIndex((n) => n.toString() === name)];

  expect(byValue(nulInPayload)?.reason).toMatch(
    /^PostgreSQL refused the data: 22P05 unsupported Unicode escape sequence/,
  );
  expect(byValue(loneSurrogate)?.reason).toMatch(/^PostgreSQL refused the data: 22P02 /);
  expect(byValue(nulInHeader)?.reason).toMatch(/^PostgreSQL refused the data: 22P05 /);
  expect(header(byValue(nulInHeader), 'traceparent')).toEqual(Buffer.from('a\u0000b'));
  expect(byValue(nulInEventType)?.reason).toBe('unknown event type Order\\u0000Created');
  expect(header(byValue(nulInEventType), 'event_type')).toEqual(Buffer.from('Order\u0000Created'));
  expect(byValue(badUtf8Header)?.reason).toBe('header traceparent is not valid UTF-8');
  expect(header(byValue(badUtf8Header), 'traceparent')).toEqual(Buffer.from([0x30, 0xff, 0xfe]));
  expect(byValue(badUtf8Value)?.reason).toBe('value is not valid UTF-8');
  expect(byValue(hugeKey)?.reason).toMatch(/^PostgreSQL refused the data: 54000 index row /);
  expect(byValue(hugeKey)?.message_key?.toString()).toBe(hugeKey.key);

  // The partition moved on: its offset is committed past every message.
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [end] = await admin.fetchTopicOffsets(topic);
    await pollUntil(
      async () => {
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        return committed?.partitions[0]?.offset === end?.high;
      },
      { timeoutMs: 20_000, description: 'the offset committed at the end of the partition' },
    );
  } finally {
    await admin.disconnect();
  }
  // A poison message alone in a later batch is parked the same way.
  const late = { ...eventMessage('order-9', 'OrderCreated', {}), value: '{"note":"\\u0000"}' };
  const next = eventMessage('order-9', 'OrderCreated', { i: 200 });
  await produce(kafka, topic, [late]);
  await produce(kafka, topic, [next]);
  await pollUntil(
    async () =>
      (await count(testDb.db, `inbox_event WHERE event_id = '${next.eventId}'`)) === 1 &&
      (await count(testDb.db, 'parked_message')) === poison.length + 1,
    { timeoutMs: 20_000, description: 'the later poison message parked and the next one stored' },
  );
  await writer.stop();

  const scrape = await registry.metrics();
  expect(scrape).toMatch(new RegExp(`^inbox_received_total ${good.length + 1}$`, 'm'));
  expect(scrape).toMatch(
    new RegExp(`^parked_messages_total\\{consumer="${groupId}"\\} ${poison.length + 1}$`, 'm'),
  );
});

it('stores deep, long and wide payloads as received, parks those jsonb refuses, and the next message of the partition is stored and processed', async () => {
  const kafka = createKafka();
  const topic = await createConfiguredTopic(kafka, 'inbox-oversized', 1, OVERSIZED_TOPIC_CONFIG);
  const corpus = oversizedPayloads({ i: 1 }).map((payload) => ({
    ...payload,
    message: { ...eventMessage('order-1', 'OrderCreated', {}), value: payload.json },
  }));
  const before = eventMessage('order-1', 'OrderCreated', { i: 0 });
  const after = eventMessage('order-1', 'OrderCreated', { i: 2 });
  await produce(kafka, topic, [before, ...corpus.map((c) => c.message), after]);

  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: { groupId: `payments-${topic}`, topics: [topic] },
  });
  const processor = startInboxProcessor({
    db: testDb.db,
    logger: recordingLogger(),
    options: { pollIntervalMs: 50 },
    handlers: { OrderCreated: async () => undefined },
  });
  const storable = corpus.filter((c) => c.storable);
  const refused = corpus.filter((c) => !c.storable);
  const ofTopic = `topic = '${topic}'`;
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, `inbox_event WHERE ${ofTopic} AND processed`)) ===
          storable.length + 2 &&
        (await count(testDb.db, `parked_message WHERE ${ofTopic}`)) === refused.length,
      {
        timeoutMs: 60_000,
        description: `${storable.length + 2} rows stored and processed, ${refused.length} parked`,
      },
    );
  } finally {
    await processor.stop();
    await writer.stop();
  }

  const stored = await sql<{ event_id: string; same: boolean }>`
    SELECT i.event_id::text AS event_id, i.payload = (e.json)::jsonb AS same
    FROM inbox_event i JOIN unnest(${corpus.map((c) => c.message.eventId)}::uuid[],
      ${corpus.map((c) => c.json)}::text[]) AS e(event_id, json) ON e.event_id = i.event_id
    WHERE i.topic = ${topic} ORDER BY i.seq`.execute(testDb.db);
  expect(stored.rows).toEqual(storable.map((c) => ({ event_id: c.message.eventId, same: true })));
  const parked = await sql<{ message_value: Buffer; reason: string }>`
    SELECT message_value, reason FROM parked_message WHERE topic = ${topic} ORDER BY id`.execute(
    testDb.db,
  );
  expect(parked.rows.map((row) => row.message_value.toString())).toEqual(
    refused.map((c) => c.json),
  );
  for (const row of parked.rows)
    expect(row.reason).toMatch(/^PostgreSQL refused the data: 54001 stack depth limit exceeded/);
  // The message after them all went through: stored last, and processed.
  const last = await testDb.db
    .selectFrom('inbox_event')
    .select(['event_id', 'processed'])
    .where('topic', '=', topic)
    .orderBy('seq', 'desc')
    .executeTakeFirst();
  expect(last).toEqual({ event_id: after.eventId, processed: true });
});
