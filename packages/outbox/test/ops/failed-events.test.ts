import { expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { enqueueMany, type OutboxEventInput } from '../../src/index.ts';
import {
  listFailedOutboxEvents,
  OUTBOX_CHANNEL,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from '../../src/ops.ts';
import { pollUntil } from '@outbox-inbox/infra';
import { useTestDb } from '../support/harness.ts';

const testDb = useTestDb('failed_events');

const event = (topic: string, key: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: key,
  topic,
  partitionKey: key,
  payload: { n },
});

/** Marks rows FAILED the way the relay does. */
async function setAside(eventIds: readonly string[], reason: string): Promise<void> {
  await sql`
    UPDATE outbox_event
    SET failed_at = now(), last_error = ${reason}, publish_attempts = publish_attempts + 3
    WHERE event_id = ANY(${eventIds}::uuid[])
  `.execute(testDb.db);
}

it('lists failed rows oldest first with what waits behind them; retry and skip touch only failed rows and wake the relays', async () => {
  const ids = (
    await testDb.db
      .transaction()
      .execute((trx) =>
        enqueueMany(trx, [
          event('orders', 'a', 1),
          event('orders', 'a', 2),
          event('orders', 'a', 3),
          event('payments', 'b', 1),
          event('orders', 'c', 1),
        ]),
      )
  ).eventIds;
  const [a1 = '', , , b1 = '', c1 = ''] = ids;
  await setAside([a1], 'MESSAGE_TOO_LARGE: refused');
  await setAside([b1], 'UNKNOWN_TOPIC_OR_PARTITION: missing');

  expect(await listFailedOutboxEvents(testDb.db)).toMatchObject([
    { eventId: a1, topic: 'orders', partitionKey: 'a', attempts: 3, waitingBehind: 2 },
    { eventId: b1, topic: 'payments', partitionKey: 'b', attempts: 3, waitingBehind: 0 },
  ]);
  expect(await listFailedOutboxEvents(testDb.db, { topic: 'payments' })).toMatchObject([
    { eventId: b1, lastError: 'UNKNOWN_TOPIC_OR_PARTITION: missing' },
  ]);
  expect(await listFailedOutboxEvents(testDb.db, { limit: 1 })).toHaveLength(1);

  // Rows that are not failed are left alone.
  expect(await retryFailedOutboxEvents(testDb.db, [c1])).toBe(0);
  expect(await skipFailedOutboxEvents(testDb.db, [c1])).toBe(0);
  expect(await retryFailedOutboxEvents(testDb.db, [])).toBe(0);

  const listener = new pg.Client({ connectionString: testDb.url });
  await listener.connect();
  let notified = 0;
  listener.on('notification', () => (notified += 1));
  await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
  try {
    expect(await retryFailedOutboxEvents(testDb.db, [b1])).toBe(1);
    expect(await skipFailedOutboxEvents(testDb.db, [a1])).toBe(1);
    await pollUntil(() => notified >= 2, { timeoutMs: 10_000, description: 'two NOTIFYs' });
  } finally {
    await listener.end();
  }

  const rows = await testDb.db
    .selectFrom('outbox_event')
    .select([
      'event_id',
      'failed_at',
      'published_at',
      'skipped_at',
      'last_error',
      'publish_attempts',
    ])
    .where('event_id', 'in', [a1, b1])
    .execute();
  const byId = new Map(rows.map((row) => [row.event_id, row]));
  // Retried: queued again, attempts reset, the last reason kept for the record.
  expect(byId.get(b1)).toMatchObject({
    failed_at: null,
    published_at: null,
    skipped_at: null,
    publish_attempts: 0,
    last_error: 'UNKNOWN_TOPIC_OR_PARTITION: missing',
  });
  // Skipped: done with (the key moves on), never sent, and it says so.
  const skipped = byId.get(a1);
  expect(skipped?.published_at).not.toBeNull();
  expect(skipped?.skipped_at).not.toBeNull();
  expect(skipped?.failed_at).not.toBeNull();
  expect(skipped?.last_error).toBe('MESSAGE_TOO_LARGE: refused');
  expect(await listFailedOutboxEvents(testDb.db)).toEqual([]);
});
