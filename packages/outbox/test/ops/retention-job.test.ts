import { Registry } from 'prom-client';
import { sql } from 'kysely';
import { pollUntil } from '@outbox-inbox/infra';
import { beforeAll, beforeEach, expect, it } from 'vitest';
import { enqueueMany, silentLogger } from '../../src/index.ts';
import {
  createRetentionMetrics,
  previewRetention,
  runRetention,
  runRetentionExclusively,
  startRetentionJob,
} from '../../src/ops.ts';
import { RETENTION_LOCK_ID } from '../../src/ops/retention-lock.ts';
import { count, seedInbox, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('retention_job');
beforeAll(async () => {
  await sql`CREATE TABLE request_key (key text PRIMARY KEY, created_at timestamptz NOT NULL)`.execute(
    testDb.db,
  );
});

/**
 * Every state a row can be in, all of it old: published, FAILED, skipped and waiting outbox
 * rows; processed, dead, discarded and waiting inbox rows; dedup rows, parked messages and a
 * service's own rows.
 */
async function seedEveryState(): Promise<void> {
  await sql`TRUNCATE outbox_event, inbox_event, processed_event, parked_message, request_key`.execute(
    testDb.db,
  );
  await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      ['published', 'failed', 'skipped', 'waiting', 'published-2'].map((state) => ({
        eventType: state,
        aggregateType: 'order',
        aggregateId: state,
        topic: 'unused',
        partitionKey: state,
        payload: {},
      })),
    ),
  );
  const old = sql`now() - interval '1 hour'`;
  await sql`UPDATE outbox_event SET created_at = ${old}`.execute(testDb.db);
  await sql`UPDATE outbox_event SET published_at = ${old} WHERE event_type LIKE 'published%'`.execute(
    testDb.db,
  );
  await sql`UPDATE outbox_event SET failed_at = ${old} WHERE event_type IN ('failed', 'skipped')`.execute(
    testDb.db,
  );
  await sql`UPDATE outbox_event SET published_at = ${old}, skipped_at = ${old} WHERE event_type = 'skipped'`.execute(
    testDb.db,
  );
  await seedInbox(
    testDb.db,
    ['processed', 'dead', 'discarded', 'waiting', 'processed-2'].map((state) => ({
      key: state,
      eventType: state,
    })),
  );
  await sql`UPDATE inbox_event SET received_at = ${old}`.execute(testDb.db);
  await sql`UPDATE inbox_event SET processed = true, processed_at = ${old}
    WHERE event_type LIKE 'processed%' OR event_type = 'discarded'`.execute(testDb.db);
  await sql`UPDATE inbox_event SET dead_at = ${old} WHERE event_type IN ('dead', 'discarded')`.execute(
    testDb.db,
  );
  await sql`INSERT INTO processed_event (consumer, event_id, processed_at)
    SELECT 'c', gen_random_uuid(), ${old} FROM generate_series(1, 3)`.execute(testDb.db);
  await sql`INSERT INTO parked_message (consumer, topic, kafka_partition, kafka_offset, reason, parked_at)
    SELECT 'c', 't', 0, n, 'not JSON', ${old} FROM generate_series(1, 3) n`.execute(testDb.db);
  await sql`INSERT INTO request_key (key, created_at)
    SELECT 'k' || n, ${old} FROM generate_series(1, 5) n`.execute(testDb.db);
}

const everything = {
  olderThan: 1000,
  processedEventsOlderThan: 1000,
  parkedOlderThan: 1000,
  tables: [{ table: 'request_key', column: 'created_at', olderThan: 1000 }],
  batchSize: 2,
};

beforeEach(seedEveryState);

it('deletes every old row that is done, in batches, and nothing unpublished, unprocessed or dead', async () => {
  const preview = await previewRetention(testDb.db, everything);
  const result = await runRetention(testDb.db, everything);
  expect(result.byTable).toEqual({
    outbox_event: 3,
    inbox_event: 3,
    processed_event: 3,
    parked_message: 3,
    request_key: 5,
  });
  // The preview counted exactly what the run then deleted.
  expect(preview.byTable).toEqual(result.byTable);
  const left = await sql<{ event_type: string }>`
    SELECT event_type FROM outbox_event ORDER BY event_type`.execute(testDb.db);
  expect(left.rows.map((row) => row.event_type)).toEqual(['failed', 'waiting']);
  const inbox = await sql<{ event_type: string }>`
    SELECT event_type FROM inbox_event ORDER BY event_type`.execute(testDb.db);
  expect(inbox.rows.map((row) => row.event_type)).toEqual(['dead', 'waiting']);
  expect(await count(testDb.db, 'parked_message')).toBe(0);
});

it('keeps what is younger than each window', async () => {
  const day = 86_400_000;
  const result = await runRetention(testDb.db, {
    olderThan: day,
    processedEventsOlderThan: day,
    parkedOlderThan: day,
    tables: [{ table: 'request_key', column: 'created_at', olderThan: day }],
  });
  expect(Object.values(result.byTable).every((n) => n === 0)).toBe(true);
  expect(await count(testDb.db, 'request_key')).toBe(5);
});

it('deletes nothing while another run holds the lock, and runs once it is free', async () => {
  const holder = await testDb.db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${RETENTION_LOCK_ID})`.execute(connection);
    try {
      return await runRetentionExclusively(testDb.db, everything);
    } finally {
      await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_ID})`.execute(connection);
    }
  });
  expect(holder).toBeUndefined();
  expect(await count(testDb.db, 'request_key')).toBe(5);
  const free = await runRetentionExclusively(testDb.db, everything);
  expect(free?.byTable['request_key']).toBe(5);
});

it('runs on a schedule and reports rows deleted per table, runs and the last run', async () => {
  const registry = new Registry();
  const jobStarted = performance.now();
  const job = startRetentionJob({
    db: testDb.db,
    logger: silentLogger,
    metrics: createRetentionMetrics(registry),
    intervalMs: 50,
    retention: everything,
  });
  try {
    const value = async (name: string, label?: [string, string]): Promise<number> => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
      const values = (metric?.values ?? []) as { value: number; labels: Record<string, string> }[];
      return values.find((v) => label === undefined || v.labels[label[0]] === label[1])?.value ?? 0;
    };
    await pollUntil(
      async () => (await value('outbox_retention_runs_total', ['outcome', 'completed'])) >= 2,
      {
        timeoutMs: 10_000,
        description: 'two completed retention runs',
      },
    );
    expect(await value('outbox_retention_deleted_rows_total', ['table', 'request_key'])).toBe(5);
    expect(await value('outbox_retention_deleted_rows_total', ['table', 'outbox_event'])).toBe(3);
    expect(await value('outbox_retention_last_run_timestamp_seconds')).toBeGreaterThan(0);
    // The gauge reads 0 until a completed run sets it; a run (several statements) takes some
    // time, and never longer than the job has existed.
    const duration = await value('outbox_retention_last_run_duration_seconds');
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBeLessThanOrEqual((performance.now() - jobStarted) / 1000);
    // A second instance finds the lock taken while the first holds it.
    await testDb.db.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(${RETENTION_LOCK_ID})`.execute(connection);
      try {
        await pollUntil(
          async () =>
            (await value('outbox_retention_runs_total', ['outcome', 'locked_elsewhere'])) >= 1,
          { timeoutMs: 10_000, description: 'a run that found the lock taken' },
        );
      } finally {
        await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_ID})`.execute(connection);
      }
    });
  } finally {
    await job.stop();
  }
});
