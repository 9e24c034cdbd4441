import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import {
  enqueue,
  enqueueMany,
  OutboxError,
  startRelay,
  type OutboxEventInput,
  type Worker,
} from '../../src/index.ts';
import {
  kafkaClient,
  collectTopic,
  createKafka,
  createTopic,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('enqueue');
let kafka: Kafka;
let topic: string;
let relay: Worker;

const event = (partitionKey: string, n: number): OutboxEventInput => ({
  eventType: 'OrderCreated',
  aggregateType: 'order',
  aggregateId: partitionKey,
  topic,
  partitionKey,
  payload: { n, items: [1, 2, 3] },
  headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
});

beforeAll(async () => {
  kafka = createKafka();
  topic = await createTopic(kafka, 'enqueue', 1);
  relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka),
    logger: recordingLogger(),
    listen: { connectionString: testDb.url },
    options: { pollIntervalMs: 60_000 },
  });
});

afterAll(async () => {
  await relay.stop();
});

describe('enqueue', () => {
  it('publishes a committed event once, with its headers, and nothing from a rolled-back one', async () => {
    const collected = await collectTopic(kafka, topic);
    await expect(
      testDb.db.transaction().execute(async (trx) => {
        await enqueue(trx, {
          ...event('rolled-back', 1),
          eventId: '00000000-0000-7000-8000-000000000001',
        });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    const { eventId } = await testDb.db
      .transaction()
      .execute((trx) => enqueue(trx, event('k1', 2)));
    const { eventIds } = await testDb.db
      .transaction()
      .execute((trx) => enqueueMany(trx, [event('k2', 3), event('k2', 4)]));

    // The poll interval is a minute: arriving within seconds means NOTIFY woke the relay.
    const messages = await pollUntil(() => collected.messages.length >= 3 && collected.messages, {
      timeoutMs: 20_000,
      description: 'three events on the topic',
    });
    await collected.stop();
    expect(messages.map((m) => m.eventId).sort()).toEqual([eventId, ...eventIds].sort());
    expect(messages.map((m) => m.key).sort()).toEqual(['k1', 'k2', 'k2']);
    expect(JSON.parse(messages.find((m) => m.eventId === eventId)?.value ?? '')).toEqual({
      n: 2,
      items: [1, 2, 3],
    });
    const rows = await testDb.db.selectFrom('outbox_event').selectAll().orderBy('id').execute();
    expect(rows.map((r) => r.event_id)).toEqual([eventId, ...eventIds]);
    expect(rows.every((r) => r.published_at !== null)).toBe(true);
    expect(rows[0]?.headers).toEqual({ traceparent: event('x', 0).headers?.['traceparent'] });
  });

  it('rejects a plain database handle at compile time and at run time', async () => {
    // @ts-expect-error a Kysely instance is not a Transaction: the write must join the caller's transaction
    const outside = enqueue(testDb.db, event('k3', 5));
    await expect(outside).rejects.toBeInstanceOf(OutboxError);
    await expect(outside).rejects.toMatchObject({ code: 'NOT_A_TRANSACTION' });
    // @ts-expect-error same for enqueueMany
    await expect(enqueueMany(testDb.db, [event('k3', 6)])).rejects.toMatchObject({
      code: 'NOT_A_TRANSACTION',
    });
    const count = await testDb.db
      .selectFrom('outbox_event')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('partition_key', '=', 'k3')
      .executeTakeFirstOrThrow();
    expect(count.n).toBe('0');
  });

  it('rejects an event that is not valid before touching the database', async () => {
    await expect(
      testDb.db
        .transaction()
        .execute((trx) => enqueue(trx, { ...event('k4', 7), eventId: 'nope' })),
    ).rejects.toMatchObject({ code: 'INVALID_EVENT' });
  });
});
