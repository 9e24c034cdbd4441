import { pollUntil } from '@outbox-inbox/infra';
import type { Kysely, Transaction } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { startDedupConsumer, type ReceivedEvent } from '../../src/index.ts';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  kafkaClient,
  produce,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';
import { createOrderTable, type OrderDb } from '../support/order-table.ts';
import { countMatching, loggedDb } from '../support/statement-log.ts';

const testDb = useTestDb('dedup_fetch');
let db: Kysely<OrderDb>;
beforeAll(async () => {
  db = await createOrderTable(testDb);
});

const keys = ['a', 'b', 'c'];

/** Events `n` = 0.. of the keys in turn, all on one partition: each key's `n`s ascend. */
function steps(total: number) {
  return Array.from({ length: total }, (_, n) =>
    eventMessage(keys[n % keys.length] ?? 'a', 'Step', { n }),
  );
}

/** The effect of one event: a payment on the order named by the key; returns what it applied. */
async function pay(trx: Transaction<OrderDb>, event: ReceivedEvent): Promise<string> {
  await trx
    .updateTable('orders')
    .set((eb) => ({ payments: eb('payments', '+', 1) }))
    .where('id', '=', event.partitionKey)
    .execute();
  return `${event.partitionKey} ${(event.payload as { n: number }).n}`;
}

/** Each key's `n`s, in the order they were applied. */
function perKey(applied: readonly string[]): Record<string, number[]> {
  return Object.fromEntries(
    keys.map((key) => [
      key,
      applied
        .filter((step) => step.startsWith(`${key} `))
        .map((step) => Number(step.split(' ')[1])),
    ]),
  );
}

/** The same, ascending: what each key's order kept looks like. */
function ascending(applied: readonly string[]): Record<string, number[]> {
  const sorted = perKey(applied);
  for (const ns of Object.values(sorted)) ns.sort((a, b) => a - b);
  return sorted;
}

it('applies a fetch in one transaction of constant statements, in key order; a redelivered fetch applies nothing again', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'dedup_fetch', 1);
  await db
    .insertInto('orders')
    .values(keys.map((id) => ({ id, status: 'new' })))
    .execute();
  // All there before the consumer starts: its first fetch holds them.
  await produce(kafka, topic, steps(30));
  const logged = loggedDb<OrderDb>(testDb.url);
  const applied: string[] = [];
  const start = (groupId: string) =>
    startDedupConsumer<OrderDb>({
      db: logged.db,
      kafka: kafkaClient(kafka),
      logger: recordingLogger(),
      options: { groupId, topics: [topic], consumerName: 'fetch', sessionTimeoutMs: 10_000 },
      handle: async (trx, event) => {
        applied.push(await pay(trx, event));
      },
    });
  try {
    const consumer = await start(`fetch-${topic}`);
    try {
      await pollUntil(() => applied.length === 30, {
        timeoutMs: 30_000,
        description: 'thirty events applied',
      });
    } finally {
      await consumer.stop();
    }
    const transactions = countMatching(logged.statements, /^begin/);
    const effects = countMatching(logged.statements, /^update "orders"/);
    expect(effects).toBe(30);
    // Per fetch, whatever its size: BEGIN, one INSERT of its processed_event rows, COMMIT.
    expect(countMatching(logged.statements, /^insert into "?processed_event/)).toBe(transactions);
    expect(logged.statements.length - effects).toBe(3 * transactions);
    expect(transactions).toBeLessThanOrEqual(3);
    expect(perKey(applied)).toEqual(ascending(applied));

    // The same events again, as after a crash before the offset commit: a second group of the
    // same consumer reads them from the start.
    logged.statements.length = 0;
    applied.length = 0;
    const again = await start(`fetch-again-${topic}`);
    try {
      // Done when the repeats are counted, or as soon as one was applied again.
      await pollUntil(
        async () =>
          applied.length > 0 ||
          (await count(
            testDb.db,
            "processed_event WHERE consumer = 'fetch' AND redeliveries = 1",
          )) === 30,
        { timeoutMs: 30_000, description: 'thirty repeats counted' },
      );
    } finally {
      await again.stop();
    }
    expect(applied).toEqual([]);
    // Per fetch: BEGIN, the INSERT that finds every row, one UPDATE counting them, COMMIT.
    const repeatTransactions = countMatching(logged.statements, /^begin/);
    expect(countMatching(logged.statements, /^update "?processed_event/)).toBe(repeatTransactions);
    expect(logged.statements).toHaveLength(4 * repeatTransactions);
  } finally {
    await logged.destroy();
  }
  const orders = await db.selectFrom('orders').select(['id', 'payments']).orderBy('id').execute();
  expect(orders).toEqual(keys.map((id) => ({ id, payments: 10 })));
});

it('a fetch with one event whose effect always fails applies the others once, in key order, and parks that one alone', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'dedup_fetch_poison', 1);
  const messages = steps(20);
  const poison = messages[7]?.eventId;
  await produce(kafka, topic, messages);
  const applied: string[] = [];
  const setSizes: number[] = [];
  const consumer = await startDedupConsumer<OrderDb>({
    db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    options: {
      groupId: `poison-${topic}`,
      topics: [topic],
      consumerName: 'fetch-poison',
      maxAttempts: 2,
      backoff: { initialMs: 20, maxMs: 100 },
      sessionTimeoutMs: 10_000,
    },
    handleBatch: async (trx, events) => {
      setSizes.push(events.length);
      if (events.some((event) => event.eventId === poison)) throw new Error('poison');
      for (const event of events) applied.push(await pay(trx, event));
    },
  });
  try {
    await pollUntil(
      async () =>
        applied.length === 19 &&
        (await count(testDb.db, "parked_message WHERE consumer = 'fetch-poison'")) === 1,
      { timeoutMs: 30_000, description: 'nineteen events applied and the poison parked' },
    );
  } finally {
    await consumer.stop();
  }
  expect(new Set(applied).size).toBe(19);
  expect(perKey(applied)).toEqual(ascending(applied));
  // The fetch was applied as a set, and split until the poison was alone.
  expect(setSizes[0]).toBe(20);
  expect(setSizes).toContain(1);
  expect(await count(testDb.db, "processed_event WHERE consumer = 'fetch-poison'")).toBe(19);
  const parked = await db
    .selectFrom('parked_message')
    .select(['reason', 'kafka_offset'])
    .where('consumer', '=', 'fetch-poison')
    .execute();
  expect(parked).toEqual([
    { reason: expect.stringContaining('handler failed 2 times'), kafka_offset: '7' },
  ]);
});
