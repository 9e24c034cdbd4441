import type { Kafka } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import { Registry } from 'prom-client';
import {
  migrateOutbox,
  silentLogger,
  startRelay,
  type KafkaClient,
  type OutboxTables,
  type Worker,
} from '@outbox-inbox/outbox';
import {
  toEventRecord,
  type EventRecord,
  type EventMessageFields,
} from '@outbox-inbox/outbox/kafka-port';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import { averagePayloadBytes, clearOutbox, writeBacklog } from '../../backlog.ts';
import type { BenchContext } from '../../context.ts';
import { measureCpuRun, serverGroups, type CpuRun } from '../../cpu.ts';
import { benchDb } from '../../database.ts';
import { benchClients, freshTopics, sendAll, type ClientName } from '../../kafka.ts';
import { startNaiveRelay, type NaiveRelay } from '../../naive-relay.ts';
import type { BenchSettings } from '../../settings.ts';
import { sleep } from '../../stats.ts';

const TOPIC = 'bench.drain';
const RAW_TOPIC = 'bench.drain.raw';

/** What B1's runs share: the outbox database, the raw producer's messages, the CPU groups. */
export interface DrainBench {
  readonly db: Kysely<OutboxTables>;
  readonly kafka: Kafka;
  /** The library's port on each client library. */
  readonly clients: Readonly<Record<ClientName, KafkaClient>>;
  readonly settings: BenchSettings;
  /** The relay's own encoding of the backlog's rows, built in memory beforehand. */
  readonly messages: readonly EventRecord[];
  readonly payloadBytes: number;
  readonly servers: Readonly<Record<string, number | undefined>>;
}

/** The relay's message for an outbox row: its key, payload and event headers. */
function asRelayMessage(
  row: Omit<EventMessageFields, 'payload' | 'headers'> & { payload: unknown },
) {
  return toEventRecord({
    ...row,
    topic: RAW_TOPIC,
    payload: JSON.stringify(row.payload),
    headers: {},
  });
}

/** How the drain's topics are replicated: the broker's default (one broker), or a cluster's. */
export interface DrainReplication {
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
}

/** The relay's topic and the raw producer's, empty, on the bench's Kafka. */
export function freshDrainTopics(
  bench: Pick<DrainBench, 'kafka' | 'settings'>,
  replication?: DrainReplication,
): Promise<void> {
  const { partitions } = bench.settings;
  return freshTopics(bench.kafka, [
    { topic: TOPIC, partitions, ...replication },
    { topic: RAW_TOPIC, partitions, ...replication },
  ]);
}

/**
 * An outbox database with the backlog written once, both topics empty, and the raw producer's
 * messages (reading the database is part of the relay's cost, not the raw producer's).
 */
export async function setUpDrain(ctx: BenchContext, database = 'bench_drain'): Promise<DrainBench> {
  const { settings, kafka } = ctx;
  const db = benchDb<OutboxTables>(await ctx.stack.createDatabase(database));
  await migrateOutbox(db);
  await freshDrainTopics({ kafka, settings });
  await writeBacklog(db, { events: settings.drainEvents, keys: settings.keys, topic: TOPIC });
  const payloadBytes = await averagePayloadBytes(db);
  const rows = await db.selectFrom('outbox_event').selectAll().orderBy('id').execute();
  const servers = serverGroups(ctx.stack);
  return {
    db,
    kafka,
    clients: benchClients(kafka, ctx.stack.kafkaBrokers),
    settings,
    messages: rows.map(asRelayMessage),
    payloadBytes,
    servers,
  };
}

/** Baseline A: the same messages through the relay's producer on `client`, one send per batch. */
export async function rawRun(bench: DrainBench, client: ClientName = 'kafkajs'): Promise<CpuRun> {
  const { messages, settings } = bench;
  const producer = bench.clients[client].createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
  const run = await measureCpuRun(bench.servers, async () => {
    for (let i = 0; i < messages.length; i += settings.batchSize) {
      await sendAll(producer, messages.slice(i, i + settings.batchSize));
    }
    return messages.length;
  });
  await producer.disconnect();
  return run;
}

async function refill(bench: DrainBench, events: number): Promise<void> {
  await clearOutbox(bench.db);
  await writeBacklog(bench.db, { events, keys: bench.settings.keys, topic: TOPIC });
  await sql`ANALYZE outbox_event`.execute(bench.db);
}

/**
 * The library's relay on `client`, default options but the batch size, until the backlog is
 * published.
 */
export async function relayRun(bench: DrainBench, client: ClientName = 'kafkajs'): Promise<CpuRun> {
  const { settings } = bench;
  await refill(bench, settings.drainEvents);
  const metrics = createOutboxMetrics(new Registry());
  let worker: Worker | undefined;
  const run = await measureCpuRun(bench.servers, async () => {
    worker = await startRelay({
      db: bench.db,
      kafka: bench.clients[client],
      logger: silentLogger,
      metrics,
      options: { batchSize: settings.batchSize, pollIntervalMs: 50 },
    });
    while (((await metrics.publishedTotal.get()).values[0]?.value ?? 0) < settings.drainEvents) {
      await sleep(10);
    }
    return settings.drainEvents;
  });
  await worker?.stop();
  return run;
}

/** Baseline B: the style guide's row-by-row relay, timed on a prefix of its backlog. */
export async function naiveRun(bench: DrainBench, asWritten: boolean): Promise<CpuRun> {
  const { settings } = bench;
  await refill(bench, settings.naiveEvents);
  let worker: NaiveRelay | undefined;
  const run = await measureCpuRun(bench.servers, async () => {
    const started = performance.now();
    worker = await startNaiveRelay({ db: bench.db, kafka: bench.kafka, asWritten });
    while (
      performance.now() - started < settings.naiveSeconds * 1000 &&
      worker.published() < settings.naiveEvents
    ) {
      await sleep(20);
    }
    return worker.published();
  });
  await worker?.stop();
  return run;
}
