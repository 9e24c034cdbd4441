// Drain-rate benchmark (not a test): a 100k-event backlog (~500-byte payloads) published by
// one relay, next to a raw kafkajs producer sending the same messages with the same batch
// size, side by side in one run. Wall-clock numbers on shared machines are noisy: read the ratio.
//   node bench/drain.ts            (starts and stops its own PostgreSQL + Kafka)
//   BENCH_EVENTS=20000 BENCH_BATCH=500 node bench/drain.ts
import { Stack } from '@outbox-inbox/infra';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Registry } from 'prom-client';
import {
  createOutboxMetrics,
  createPgPool,
  migrateOutbox,
  replayOutbox,
  silentLogger,
  startRelay,
  type OutboxTables,
} from '../src/index.ts';
import { createRelayProducer } from '../src/relay/publish-batch.ts';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 100_000);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 500);
const KEYS = Number(process.env['BENCH_KEYS'] ?? 1000);
const PARTITIONS = 6;

const stack = await Stack.up({ name: `bench-outbox-${process.pid}`, kafkaHeapMb: 1024 });
try {
  const url = await stack.createDatabase('outbox_bench');
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: url, max: 4 }, silentLogger),
    }),
  });
  await migrateOutbox(db);
  const kafka = new Kafka({
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    clientId: 'bench',
  });
  const admin = kafka.admin();
  await admin.connect();
  const topics = ['bench-warmup', 'bench-raw', 'bench-raw-2', 'bench-raw-3', 'bench-relay'];
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS })),
    waitForLeaders: true,
  });
  await admin.disconnect();

  // The backlog: ~500-byte JSON payloads over KEYS keys, written like enqueue would.
  await sql`
    INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, topic, partition_key)
    SELECT gen_random_uuid(), 'order', 'order-' || (i % ${KEYS}), 'OrderCreated',
      jsonb_build_object('orderId', 'order-' || (i % ${KEYS}), 'seq', i, 'customerId', md5(i::text),
        'items', jsonb_build_array(jsonb_build_object('sku', 'SKU-' || (i % 97), 'qty', 1 + i % 5, 'price', 1999)),
        'note', repeat('x', 330)),
      'bench-relay', 'order-' || (i % ${KEYS})
    FROM generate_series(1, ${EVENTS}) AS i`.execute(db);
  await sql`VACUUM ANALYZE outbox_event`.execute(db);
  const sample = await sql<{
    bytes: number;
  }>`SELECT avg(octet_length(payload::text))::int AS bytes FROM outbox_event`.execute(db);

  // The same messages for the raw producer, prepared in memory (the DB is not part of its cost).
  const rows = await db
    .selectFrom('outbox_event')
    .select([
      'partition_key',
      'event_id',
      'event_type',
      'aggregate_type',
      'aggregate_id',
      'created_at',
    ])
    .select(sql<string>`payload::text`.as('payload_text'))
    .orderBy('id')
    .execute();
  const messages: Message[] = rows.map((row) => ({
    key: row.partition_key,
    value: row.payload_text, // byte for byte what the relay sends
    headers: {
      event_id: row.event_id,
      event_type: row.event_type,
      aggregate_type: row.aggregate_type,
      aggregate_id: row.aggregate_id,
      occurred_at: row.created_at.toISOString(),
    },
  }));

  // Raw kafkajs: same producer settings as the relay (idempotent, acks -1, 1 in flight).
  const sendRaw = async (topic: string, count: number): Promise<number> => {
    const producer = createRelayProducer(kafka);
    await producer.connect();
    const started = performance.now();
    for (let i = 0; i < count; i += BATCH) {
      await producer.sendBatch({
        topicMessages: [{ topic, messages: messages.slice(i, Math.min(i + BATCH, count)) }],
        acks: -1,
      });
    }
    const seconds = (performance.now() - started) / 1000;
    await producer.disconnect();
    return seconds;
  };
  // Warm the broker's JIT first, then raw before and after the relay (drift shows as a gap).
  await sendRaw('bench-warmup', Math.min(EVENTS, 20_000));
  const rawBefore = await sendRaw('bench-raw', EVENTS);

  // One relay draining the backlog; then the same backlog again (replayOutbox), with 2 lanes.
  const drain = async (lanes: number): Promise<number> => {
    const registry = new Registry();
    const metrics = createOutboxMetrics(registry);
    const started = performance.now();
    const relay = await startRelay({
      db,
      kafka,
      logger: silentLogger,
      metrics,
      options: { batchSize: BATCH, pollIntervalMs: 50, lanes },
    });
    for (;;) {
      const published = (await metrics.publishedTotal.get()).values[0]?.value ?? 0;
      if (published >= EVENTS) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    await relay.stop();
    return seconds;
  };
  // Interleaved (raw, relay, raw, relay x2 lanes, raw): each relay run is compared with the
  // raw runs on either side of it, which cancels most of the drift of a shared machine.
  const relaySeconds = await drain(1);
  const rawMiddle = await sendRaw('bench-raw-2', EVENTS);
  await replayOutbox(db, { topic: 'bench-relay' });
  await sql`VACUUM ANALYZE outbox_event`.execute(db);
  const twoLaneSeconds = await drain(2);
  const rawAfter = await sendRaw('bench-raw-3', EVENTS);
  const left = await sql<{
    n: string;
  }>`SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL`.execute(db);
  await db.destroy();

  const rate = (seconds: number): number => EVENTS / seconds;
  const rawRate = rate((rawBefore + rawMiddle + rawAfter) / 3);
  const relayRate = rate(relaySeconds);
  const twoLaneRate = rate(twoLaneSeconds);
  console.log(
    JSON.stringify(
      {
        events: EVENTS,
        batchSize: BATCH,
        keys: KEYS,
        partitions: PARTITIONS,
        avgPayloadBytes: sample.rows[0]?.bytes,
        rawKafkajsSeconds: [rawBefore, rawMiddle, rawAfter].map((x) => +x.toFixed(2)),
        rawKafkajsEventsPerSecond: Math.round(rawRate),
        relay: {
          seconds: +relaySeconds.toFixed(2),
          eventsPerSecond: Math.round(relayRate),
          ratioToNeighbouringRaw: +(relayRate / rate((rawBefore + rawMiddle) / 2)).toFixed(2),
        },
        relayTwoLanes: {
          seconds: +twoLaneSeconds.toFixed(2),
          eventsPerSecond: Math.round(twoLaneRate),
          ratioToNeighbouringRaw: +(twoLaneRate / rate((rawMiddle + rawAfter) / 2)).toFixed(2),
        },
        unpublishedAfter: Number(left.rows[0]?.n),
      },
      null,
      2,
    ),
  );
} finally {
  await stack.down();
}
