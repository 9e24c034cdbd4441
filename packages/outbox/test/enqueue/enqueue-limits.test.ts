import { expect, it } from 'vitest';
import { enqueue, enqueueMany, type OutboxEventInput } from '../../src/index.ts';
import { DEFAULT_MAX_EVENT_BYTES } from '../../src/enqueue/kafka-limits.ts';
import { count, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('enqueue_limits');

const event = (payload: unknown, topic = 'orders'): OutboxEventInput => ({
  eventType: 'OrderCreated',
  aggregateType: 'order',
  aggregateId: 'o-1',
  topic,
  partitionKey: 'o-1',
  payload,
});

it('an event above the maximum fails the caller transaction with EVENT_TOO_LARGE', async () => {
  const oversize = event({ blob: 'x'.repeat(DEFAULT_MAX_EVENT_BYTES) });
  await expect(
    testDb.db.transaction().execute(async (trx) => {
      await enqueue(trx, event({ n: 1 }));
      await enqueue(trx, oversize);
    }),
  ).rejects.toMatchObject({ name: 'OutboxError', code: 'EVENT_TOO_LARGE' });
  // The whole transaction rolled back, the small event with it.
  expect(await count(testDb.db, 'outbox_event')).toBe(0);

  // The maximum is the caller's to choose; the record's headers count too.
  const small = event({ blob: 'x'.repeat(500) });
  await expect(
    testDb.db.transaction().execute((trx) => enqueue(trx, small, { maxEventBytes: 500 })),
  ).rejects.toMatchObject({ code: 'EVENT_TOO_LARGE' });
  await testDb.db.transaction().execute((trx) => enqueue(trx, small, { maxEventBytes: 2000 }));
  expect(await count(testDb.db, 'outbox_event')).toBe(1);
});

it('enqueueMany refuses the whole set when one event has an invalid topic', async () => {
  await expect(
    testDb.db
      .transaction()
      .execute((trx) =>
        enqueueMany(trx, [event({ n: 1 }), event({ n: 2 }, 'orders/eu'), event({ n: 3 })]),
      ),
  ).rejects.toMatchObject({ name: 'OutboxError', code: 'INVALID_TOPIC' });
  expect(await count(testDb.db, "outbox_event WHERE payload->>'n' IS NOT NULL")).toBe(0);
});
