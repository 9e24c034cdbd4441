import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Message } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { createOutboxMetrics, startInboxWriter } from '../../src/index.ts';
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
