import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { sql, type Transaction } from 'kysely';
import { enqueue, enqueueMany, type OutboxEventInput, type OutboxTables } from '../../src/index.ts';
import type { EventProducer } from '../../src/kafka-port.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { claimBatch } from '../../src/relay/claim-batch.ts';
import { beginBatchTransaction } from '../../src/relay/batch-transaction.ts';
import { publishBatch } from '../../src/relay/publish-batch.ts';
import {
  checkOrder,
  collectTopic,
  createKafka,
  createTopic,
  kafkaClient,
  useTestDb,
} from '../support/harness.ts';
import { pollUntil } from '@outbox-inbox/infra';

const testDb = useTestDb('fence');
let kafka: Kafka;
let topic: string;
let producer: EventProducer;

beforeAll(async () => {
  kafka = createKafka();
  topic = await createTopic(kafka, 'fence', 1);
  producer = kafkaClient(kafka).createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
});

const event = (partitionKey: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: partitionKey,
  topic,
  partitionKey,
  payload: { n },
});

/** Runs `work` in a transaction that stays open (locks held) until `commit()`. */
function heldTransaction<T>(work: (trx: Transaction<OutboxTables>) => Promise<T>) {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let ready: (value: T) => void = () => undefined;
  const result = new Promise<T>((resolve) => (ready = resolve));
  const done = testDb.db.transaction().execute(async (trx) => {
    ready(await work(trx));
    await gate;
  });
  return { result, commit: async () => (release(), await done) };
}

const publishOnce = async () =>
  (
    await publishBatch({
      db: testDb.db,
      producer,
      options: { ...DEFAULT_RELAY_OPTIONS, batchSize: 100 },
    })
  ).published;
/**
 * Claims as a relay does, with its transaction's timeouts: a claim that waits on another
 * relay's row lock fails after `lockTimeoutMs` instead of hanging the file.
 */
const claim = async (trx: Transaction<OutboxTables>, batchSize: number) => {
  // Inside a transaction already: its BEGIN only warns, its settings apply to this one.
  await beginBatchTransaction(trx, DEFAULT_RELAY_OPTIONS);
  const batch = await claimBatch(trx, { ...DEFAULT_RELAY_OPTIONS, batchSize, scanWindow: 100 });
  return batch.events;
};

it('a transaction that takes the lower id and commits last is not overtaken', async () => {
  const collected = await collectTopic(kafka, topic);
  // A takes the lower id and stays open; B writes the same key (and another key) and commits.
  const a = heldTransaction((trx) => enqueue(trx, event('order-1', 1)));
  const aEvent = await a.result;
  const bIds = await testDb.db
    .transaction()
    .execute(async (trx) => [
      (await enqueue(trx, event('order-1', 2))).eventId,
      (await enqueue(trx, event('order-2', 1))).eventId,
    ]);

  // B is committed and visible, but newer than A, which is still running: the fence holds
  // back all of it (including the other key: the price of the fence, see README). A failing
  // check still ends A, so the file fails at once instead of waiting on its open transaction.
  try {
    expect(await publishOnce()).toBe(0);
  } finally {
    await a.commit();
  }
  expect(await publishOnce()).toBe(3);
  await pollUntil(() => collected.messages.length >= 3, {
    timeoutMs: 20_000,
    description: '3 events',
  });
  await collected.stop();
  const order = checkOrder(
    collected.messages,
    new Map([
      ['order-1', [aEvent.eventId, bIds[0] ?? '']],
      ['order-2', [bIds[1] ?? '']],
    ]),
  );
  expect(order).toEqual({ duplicates: 0, outOfOrder: [], missing: 0 });
});

it('a key whose head another relay holds is skipped whole; other keys are not', async () => {
  const ids = await testDb.db.transaction().execute(async (trx) => {
    const out: string[] = [];
    for (const [key, n] of [
      ['k', 1],
      ['k', 2],
      ['other', 1],
      ['k', 3],
    ] as const) {
      out.push((await enqueue(trx, event(key, n))).eventId);
    }
    return out;
  });
  // Relay 1 claims only k's head (batch of 1) and keeps its transaction open.
  const first = heldTransaction((trx) => claim(trx, 1));
  try {
    expect((await first.result).map((row) => row.event_id)).toEqual([ids[0]]);

    // Relay 2 must not take k's later rows while k's head is in relay 1's hands.
    const second = await testDb.db.transaction().execute((trx) => claim(trx, 100));
    expect(second.map((row) => row.event_id)).toEqual([ids[2]]);
  } finally {
    await first.commit();
  }

  // Nothing was marked published (claims only): a claim now takes k whole, in order.
  const third = await testDb.db.transaction().execute((trx) => claim(trx, 100));
  expect(third.map((row) => row.event_id)).toEqual([ids[0], ids[1], ids[2], ids[3]]);
  expect(await publishOnce()).toBe(4);
});

it('rows restored from a cluster whose xid counter ran ahead are published, in order', async () => {
  const collected = await collectTopic(kafka, topic);
  const restored = await testDb.db
    .transaction()
    .execute(
      async (trx) =>
        (await enqueueMany(trx, [event('restored', 1), event('restored', 2), event('other', 1)]))
          .eventIds,
    );
  // A dump/restore keeps the column: values far above this cluster's xid counter.
  await sql`
    UPDATE outbox_event
    SET transaction_id = (pg_current_xact_id()::text::numeric + 1000000000)::text::xid8
    WHERE event_id = ANY(${restored}::uuid[])
  `.execute(testDb.db);
  const { eventId: later } = await testDb.db
    .transaction()
    .execute((trx) => enqueue(trx, event('restored', 3)));

  expect(await publishOnce()).toBe(4);
  await pollUntil(
    () => collected.messages.filter((m) => [...restored, later].includes(m.eventId)).length >= 4,
    { timeoutMs: 20_000, description: 'the restored events and the later one' },
  );
  await collected.stop();
  const ours = collected.messages.filter((m) => [...restored, later].includes(m.eventId));
  expect(
    checkOrder(
      ours,
      new Map([
        ['restored', [restored[0] ?? '', restored[1] ?? '', later]],
        ['other', [restored[2] ?? '']],
      ]),
    ),
  ).toEqual({ duplicates: 0, outOfOrder: [], missing: 0 });
});
