import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { enqueueMany, OutboxError } from '../../src/index.ts';
import { runRetention } from '../../src/ops.ts';
import { count, seedInbox, useTestDb } from '../support/harness.ts';

const DAY = 86_400_000;

const testDb = useTestDb('retention');

/** One published outbox row, one processed inbox row, one processed_event row per age (days). */
async function seedAged(ages: readonly number[]): Promise<void> {
  await sql`TRUNCATE outbox_event, inbox_event, processed_event`.execute(testDb.db);
  await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      ages.map((age) => ({
        eventType: 'Step',
        aggregateType: 'order',
        aggregateId: `o-${age}`,
        topic: 'unused',
        partitionKey: `o-${age}`,
        payload: { age },
      })),
    ),
  );
  const ids = await seedInbox(
    testDb.db,
    ages.map((age) => ({ key: `o-${age}`, eventType: 'Step', payload: { age } })),
  );
  for (const [i, age] of ages.entries()) {
    const when = sql`now() - make_interval(days => ${age})`;
    await sql`UPDATE outbox_event SET published_at = ${when} WHERE payload->>'age' = ${String(age)}`.execute(
      testDb.db,
    );
    await sql`UPDATE inbox_event SET processed = true, processed_at = ${when} WHERE event_id = ${ids[i]}`.execute(
      testDb.db,
    );
    await sql`INSERT INTO processed_event (consumer, event_id, processed_at)
      VALUES ('c', gen_random_uuid(), ${when})`.execute(testDb.db);
  }
}

it('keeps a processed inbox row younger than its window although it is older than the outbox window', async () => {
  await seedAged([10, 40]);
  const result = await runRetention(testDb.db, {
    olderThan: 1 * DAY,
    processedEventsOlderThan: 30 * DAY,
  });
  expect(result).toMatchObject({ outboxDeleted: 2, inboxDeleted: 1, processedEventsDeleted: 1 });
  // The inbox's dedup window defaults to the processed_event window, not the outbox's.
  expect(await count(testDb.db, "inbox_event WHERE payload->>'age' = '10'")).toBe(1);
  expect(await count(testDb.db, 'inbox_event')).toBe(1);

  await seedAged([10, 40]);
  expect(
    await runRetention(testDb.db, {
      olderThan: 1 * DAY,
      processedEventsOlderThan: 30 * DAY,
      inboxOlderThan: 60 * DAY,
    }),
  ).toMatchObject({ outboxDeleted: 2, inboxDeleted: 0, processedEventsDeleted: 1 });
  // Without a processed_event window, both dedup tables are kept.
  expect(await runRetention(testDb.db, { olderThan: 1 * DAY })).toMatchObject({
    inboxDeleted: 0,
    processedEventsDeleted: 0,
  });
});

it('refuses an inbox window shorter than the processed_event window, and deletes nothing', async () => {
  await seedAged([10, 40]);
  const shorter = runRetention(testDb.db, {
    olderThan: 1 * DAY,
    processedEventsOlderThan: 30 * DAY,
    inboxOlderThan: 7 * DAY,
  });
  await expect(shorter).rejects.toBeInstanceOf(OutboxError);
  await expect(shorter).rejects.toThrow(
    /inboxOlderThan \(604800000 ms\) is shorter than the processed_event window \(processedEventsOlderThan: 2592000000 ms\)/,
  );
  await expect(
    runRetention(testDb.db, { olderThan: 1 * DAY, inboxOlderThan: 7 * DAY }),
  ).rejects.toThrow(/processedEventsOlderThan: not set: kept for ever/);
  expect(await count(testDb.db, 'outbox_event')).toBe(2);
  expect(await count(testDb.db, 'inbox_event')).toBe(2);
});
