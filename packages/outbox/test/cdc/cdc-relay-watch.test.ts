import { randomUUID } from 'node:crypto';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { replicationName } from '../../src/cdc/cdc-connector-config.ts';
import {
  ConnectApi,
  removeCdcRelay,
  startCdcRelay,
  type CdcRelayWorkerDeps,
} from '../../src/cdc.ts';
import { enqueue, type OutboxTables } from '../../src/index.ts';
import { createOutboxMetrics, type OutboxMetrics } from '../../src/ops.ts';
import {
  kafkaClient,
  collectTopic,
  createKafka,
  createTopic,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';
import { pauseConnector } from '../support/connect.ts';

const testDb = useTestDb('cdc_watch');
let kafka: Kafka;
let topic: string;
let deps: CdcRelayWorkerDeps<OutboxTables>;
let metrics: OutboxMetrics;
let registry: Registry;

beforeAll(async () => {
  await stack().addServer('connect');
  kafka = createKafka('cdc-watch');
  topic = await createTopic(kafka, 'cdc-watch', 3);
  registry = new Registry();
  metrics = createOutboxMetrics(registry, testDb.db, { stallAfterMs: 4000 });
  deps = {
    db: testDb.db,
    kafka: kafkaClient(kafka),
    connectUrl: stack().connectUrl,
    connector: { name: `watch-${randomUUID()}`, databaseUrl: testDb.url },
    logger: recordingLogger(),
    metrics,
    options: { watchIntervalMs: 250, backoff: { initialMs: 100, maxMs: 1000, multiplier: 2 } },
  };
}, 240_000);

afterAll(async () => {
  if (deps) await removeCdcRelay(deps);
}, 60_000);

/** The value of a `connector`-labelled gauge for our connector; undefined before it is set. */
async function gauge(name: string): Promise<number | undefined> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values.find((value) => value.labels['connector'] === deps.connector.name)?.value;
}

const relayStalled = () =>
  metrics.stalls.workers().find((worker) => worker.worker === 'outbox-relay')?.stalled ?? false;

async function enqueueOne(n: number): Promise<string> {
  const { eventId } = await testDb.db.transaction().execute((trx) =>
    enqueue(trx, {
      eventType: 'Step',
      aggregateType: 'order',
      aggregateId: 'k',
      topic,
      partitionKey: 'k',
      payload: { n },
    }),
  );
  return eventId;
}

it('registers the connector, shows its slot lag, stalls while it is paused, confirms WAL of other tables, and re-registers it when deleted', async () => {
  const collected = await collectTopic(kafka, topic);
  const worker = await startCdcRelay(deps);
  const api = new ConnectApi(deps.connectUrl);
  try {
    await pollUntil(async () => (await gauge('outbox_cdc_connector_running')) === 1, {
      timeoutMs: 60_000,
      description: 'the connector running',
    });
    const first = await enqueueOne(1);
    await pollUntil(() => collected.messages.some((m) => m.eventId === first), {
      timeoutMs: 30_000,
      description: 'the first event on the topic',
    });

    // Paused, the connector confirms nothing: the slot keeps the WAL of what comes after.
    await pauseConnector(api, deps.connector.name);
    await pollUntil(async () => (await gauge('outbox_cdc_connector_running')) === 0, {
      timeoutMs: 30_000,
      description: 'the connector seen paused',
    });
    const whilePaused = await enqueueOne(2);
    await pollUntil(async () => ((await gauge('outbox_cdc_slot_lag_bytes')) ?? 0) > 0, {
      timeoutMs: 30_000,
      description: 'slot lag in bytes',
    });
    await pollUntil(async () => ((await gauge('outbox_cdc_slot_lag_seconds')) ?? 0) >= 2, {
      timeoutMs: 30_000,
      description: 'slot lag in seconds',
    });
    await pollUntil(relayStalled, { timeoutMs: 30_000, description: 'the relay stalled' });
    expect(collected.messages.some((m) => m.eventId === whilePaused)).toBe(false);

    // Resumed: the event goes out, the stall ends, and the slot trails by no more than its
    // heartbeats (5 s) and offset flushes (1 s) allow.
    await api.resume(deps.connector.name);
    await pollUntil(() => collected.messages.some((m) => m.eventId === whilePaused), {
      timeoutMs: 30_000,
      description: 'the event held while paused',
    });
    await pollUntil(() => !relayStalled(), { timeoutMs: 30_000, description: 'the stall over' });
    await pollUntil(async () => ((await gauge('outbox_cdc_slot_lag_seconds')) ?? 99) < 10, {
      timeoutMs: 30_000,
      description: 'the slot caught up',
    });

    // A quiet outbox while another table writes WAL: the heartbeat rows let the slot confirm
    // past it, so PostgreSQL may recycle it.
    await sql`CREATE TABLE busy (n int, filler text)`.execute(testDb.db);
    await sql`INSERT INTO busy SELECT n, repeat('x', 500) FROM generate_series(1, 2000) n`.execute(
      testDb.db,
    );
    const { rows } = await sql<{ position: string }>`
      SELECT pg_current_wal_lsn()::text AS position
    `.execute(testDb.db);
    const written = rows[0]?.position ?? '';
    await pollUntil(
      async () => {
        const confirmed = await sql<{ passed: boolean }>`
          SELECT confirmed_flush_lsn >= ${written}::pg_lsn AS passed
          FROM pg_replication_slots WHERE slot_name = ${replicationName(deps.connector.name)}
        `.execute(testDb.db);
        return confirmed.rows[0]?.passed === true;
      },
      { timeoutMs: 30_000, description: 'the slot confirming WAL of another table' },
    );

    // Deleted behind the watch's back: registered again, and it publishes from its slot.
    await api.remove(deps.connector.name);
    await pollUntil(async () => (await api.status(deps.connector.name)) === undefined, {
      timeoutMs: 30_000,
      description: 'the connector gone',
    });
    const afterDelete = await enqueueOne(3);
    await pollUntil(() => collected.messages.some((m) => m.eventId === afterDelete), {
      timeoutMs: 60_000,
      description: 'an event after the connector was registered again',
    });
    // The gauge is the watch's last look (every 250 ms here): the look that registered it
    // again saw it missing, so it reads 1 from a later look, which may come after the event.
    await pollUntil(async () => (await gauge('outbox_cdc_connector_running')) === 1, {
      timeoutMs: 20_000,
      description: 'the watch seeing the connector running again',
    });
    expect(await gauge('outbox_cdc_connector_running')).toBe(1);
  } finally {
    await worker.stop();
    await collected.stop();
  }
}, 240_000);
