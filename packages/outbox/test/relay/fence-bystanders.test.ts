import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { sql, type Kysely, type Transaction } from 'kysely';
import { Registry } from 'prom-client';
import { enqueue, type OutboxEventInput } from '../../src/index.ts';
import type { EventProducer } from '../../src/kafka-port.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { oldestHeldByFenceMs } from '../../src/relay/commit-order-fence.ts';
import { publishBatch } from '../../src/relay/publish-batch.ts';
import {
  createKafka,
  createTestDb,
  createTopic,
  kafkaClient,
  useTestDb,
  type OwnedTestDb,
} from '../support/harness.ts';
import { pollUntil } from '@outbox-inbox/infra';

// Transactions the fence must NOT wait for (they can never write an outbox row of this
// database before the rows it would hold back), and one it must.
const testDb = useTestDb('fence_bystanders');
let other: OwnedTestDb;
let kafka: Kafka;
let topic: string;
let producer: EventProducer;

beforeAll(async () => {
  // Another database of the same server, as a second service or an operator would use it.
  other = await createTestDb('fence_other');
  await sql`CREATE TABLE bystander (n int)`.execute(other.db);
  kafka = createKafka();
  topic = await createTopic(kafka, 'fence_bystanders', 1);
  producer = kafkaClient(kafka).createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
  await other.destroy();
});

const event = (partitionKey: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: partitionKey,
  topic,
  partitionKey,
  payload: { n },
});

/** A transaction of `db` that stays open, running each `run` in turn, until `commit()`. */
function openTransaction<DB>(db: Kysely<DB>) {
  const steps: ((trx: Transaction<DB>) => Promise<void>)[] = [];
  let wake: () => void = () => undefined;
  let closing = false;
  const done = db.transaction().execute(async (trx) => {
    for (;;) {
      const step = steps.shift();
      if (step !== undefined) await step(trx);
      else if (closing) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  });
  return {
    run<T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        steps.push((trx) => work(trx).then(resolve, reject));
        wake();
      });
    },
    async commit(): Promise<void> {
      closing = true;
      wake();
      await done;
    },
  };
}

const publishOnce = async () =>
  (
    await publishBatch({
      db: testDb.db,
      producer,
      options: { ...DEFAULT_RELAY_OPTIONS, batchSize: 100 },
    })
  ).published;

/** Runs the relay's step until these events are published, or fails at the deadline. */
async function published(eventIds: readonly string[], description: string): Promise<void> {
  await pollUntil(
    async () => {
      await publishOnce();
      const result = await sql<{ waiting: string }>`
        SELECT count(*) AS waiting FROM outbox_event
        WHERE event_id = ANY(${eventIds}::uuid[]) AND published_at IS NULL
      `.execute(testDb.db);
      return Number(result.rows[0]?.waiting) === 0;
    },
    { timeoutMs: 10_000, description },
  );
}

const enqueueCommitted = (key: string, n: number) =>
  testDb.db.transaction().execute(async (trx) => (await enqueue(trx, event(key, n))).eventId);

/** Whether xmin-only fencing would hold back this event: its transaction is not below xmin. */
async function xminWouldHold(eventId: string): Promise<boolean> {
  const result = await sql<{ held: boolean }>`
    SELECT transaction_id >= pg_snapshot_xmin(pg_current_snapshot()) AS held
    FROM outbox_event WHERE event_id = ${eventId}
  `.execute(testDb.db);
  return result.rows[0]?.held === true;
}

it('an open transaction in another database of the server does not hold the relay', async () => {
  const bystander = openTransaction(other.db);
  try {
    await bystander.run((trx) => sql`INSERT INTO bystander VALUES (1)`.execute(trx));
    const eventId = await enqueueCommitted('other-db', 1);
    expect(await xminWouldHold(eventId)).toBe(true);
    await published([eventId], 'the event written after the other database opened its transaction');
  } finally {
    await bystander.commit();
  }
});

it('an open transaction of this database that wrote no outbox row does not hold the relay', async () => {
  const bystander = openTransaction(testDb.db);
  try {
    await bystander.run((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
    const eventId = await enqueueCommitted('same-db', 1);
    expect(await xminWouldHold(eventId)).toBe(true);
    await published([eventId], 'the event written after the bystander took its xid');
  } finally {
    await bystander.commit();
  }
});

it('a transaction that took its xid before it became a writer holds later rows from then on', async () => {
  // A has its xid from a business write, and no outbox row yet: not waited for.
  const a = openTransaction(testDb.db);
  let aCommitted = false;
  const registry = new Registry();
  createOutboxMetrics(registry, testDb.db, { backlogCacheMs: 0 });
  try {
    await a.run((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
    const first = await enqueueCommitted('writer', 1);
    await published([first], 'the event written before A became a writer');
    // A becomes a writer: from now on rows of transactions newer than A wait for it.
    const { eventId: ofA } = await a.run((trx) => enqueue(trx, event('writer', 2)));
    const later = await enqueueCommitted('writer', 3);
    expect(await publishOnce()).toBe(0);
    const scrape = await registry.metrics();
    expect(scrape).toMatch(/^outbox_fence_held_events 1$/m);
    expect(scrape).toMatch(/^outbox_fence_held_oldest_age_seconds \d/m);
    expect(await oldestHeldByFenceMs(testDb.db)).toBeGreaterThanOrEqual(0);
    const held = await sql<{ event_id: string }>`
      SELECT event_id FROM outbox_event WHERE published_at IS NULL
    `.execute(testDb.db);
    expect(held.rows.map((row) => row.event_id)).toEqual([later]);
    await a.commit();
    aCommitted = true;
    await published([ofA, later], "A's event and the one it held back");
    expect(await registry.metrics()).toMatch(/^outbox_fence_held_events 0$/m);
  } finally {
    if (!aCommitted) await a.commit();
  }
});
