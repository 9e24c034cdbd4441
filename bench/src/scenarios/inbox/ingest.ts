import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import { Registry } from 'prom-client';
import {
  silentLogger,
  startInboxWriter,
  type KafkaClient,
  type OutboxTables,
} from '@outbox-inbox/outbox';
import { EVENT_HEADERS, type OutgoingRecord } from '@outbox-inbox/outbox/kafka-port';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import { startCpuMeter, type CpuUse } from '../../cpu.ts';
import { benchClient, sendAll, type ClientName } from '../../kafka.ts';
import type { BenchSettings } from '../../settings.ts';
import { sleep } from '../../stats.ts';

export const INBOX_TOPIC = 'bench.inbox';

/** What the ingest runs share: the inbox database, the topic's size, the CPU groups. */
export interface IngestBench {
  readonly db: Kysely<OutboxTables>;
  readonly kafka: Kafka;
  /** The library's port on each client library. */
  readonly clients: Readonly<Record<ClientName, KafkaClient>>;
  readonly settings: BenchSettings;
  readonly servers: Readonly<Record<string, number | undefined>>;
  /** Consumer groups used so far: each run reads the topic from the beginning. */
  groups: number;
}

/** Message `j` of the topic: relay-shaped (its headers), a ~500-byte OrderCreated-like payload. */
function relayShapedMessage(j: number, keys: number): OutgoingRecord {
  const key = `order-${j % keys}`;
  return {
    topic: INBOX_TOPIC,
    key,
    value: JSON.stringify({
      schemaVersion: 1,
      orderId: key,
      customerId: `customer-${j % 997}`,
      amount: 1000 + j,
      currency: 'EUR',
      seq: j,
      note: 'x'.repeat(300),
    }),
    headers: {
      [EVENT_HEADERS.eventId]: randomUUID(),
      [EVENT_HEADERS.eventType]: 'OrderCreated',
      [EVENT_HEADERS.aggregateType]: 'order',
      [EVENT_HEADERS.aggregateId]: key,
      [EVENT_HEADERS.occurredAt]: new Date().toISOString(),
    },
  };
}

/** Fills the topic once, through the relay's own producer, batch by batch. */
export async function fillInboxTopic(kafka: Kafka, settings: BenchSettings): Promise<void> {
  const producer = benchClient(kafka).createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
  for (let i = 0; i < settings.inboxMessages; i += settings.batchSize) {
    const end = Math.min(i + settings.batchSize, settings.inboxMessages);
    const messages = Array.from({ length: end - i }, (_, k) =>
      relayShapedMessage(i + k, settings.keys),
    );
    await sendAll(producer, messages);
  }
  await producer.disconnect();
}

/**
 * From the first message seen to `count() >= total`, polled every 10 ms for both readers (the
 * group join and the first fetch are not counted for either): the CPU used in that window.
 */
async function fromFirst(
  count: () => Promise<number> | number,
  total: number,
  groups: Readonly<Record<string, number | undefined>>,
): Promise<CpuUse> {
  let meter: { stop(): CpuUse } | undefined;
  for (;;) {
    const seen = await count();
    if (seen > 0 && meter === undefined) meter = startCpuMeter(groups);
    if (seen >= total && meter !== undefined) return meter.stop();
    await sleep(10);
  }
}

/** The baseline: a raw kafkajs consumer that only counts, committing as kafkajs does by default. */
export async function rawConsumerRun(bench: IngestBench): Promise<CpuUse> {
  let seen = 0;
  const consumer = bench.kafka.consumer({ groupId: `bench-raw-${++bench.groups}` });
  await consumer.connect();
  await consumer.subscribe({ topic: INBOX_TOPIC, fromBeginning: true });
  await consumer.run({ eachBatch: async ({ batch }) => void (seen += batch.messages.length) });
  const cpu = await fromFirst(() => seen, bench.settings.inboxMessages, bench.servers);
  await consumer.disconnect();
  return cpu;
}

/**
 * The inbox writer on `client`: stores every message (INSERT … ON CONFLICT), then commits its
 * offsets.
 */
export async function inboxWriterRun(bench: IngestBench, client: ClientName): Promise<CpuUse> {
  await sql`TRUNCATE inbox_event`.execute(bench.db);
  const metrics = createOutboxMetrics(new Registry());
  const worker = await startInboxWriter({
    db: bench.db,
    kafka: bench.clients[client],
    logger: silentLogger,
    metrics,
    options: { groupId: `bench-inbox-${++bench.groups}`, topics: [INBOX_TOPIC] },
  });
  const cpu = await fromFirst(
    async () => (await metrics.inboxReceivedTotal.get()).values[0]?.value ?? 0,
    bench.settings.inboxMessages,
    bench.servers,
  );
  await worker.stop();
  return cpu;
}
