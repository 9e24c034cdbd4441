import { pollUntil, type SentStatement } from '@outbox-inbox/infra';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startInboxProcessor, type InboxHandler } from '../../src/index.ts';
import { INBOX_CHANNEL } from '../../src/enqueue/channels.ts';
import { createEffectTable, recordEffect, type EffectDb } from '../support/effect-table.ts';
import {
  count,
  recordingLogger,
  seedInbox,
  statementCountingDb,
  useTestDb,
} from '../support/harness.ts';

/*
 * At ordinary rates rows arrive one at a time. A row on its own should cost the processor one
 * claim: not a claim by the worker the NOTIFY woke, another by the worker it woke in turn, and
 * a third when the first comes back to find nothing.
 */

const testDb = useTestDb('inbox_claims_per_row');
let counted: { readonly db: Kysely<EffectDb>; readonly sent: SentStatement[] };
beforeAll(async () => {
  await createEffectTable(testDb);
  counted = statementCountingDb<EffectDb>(testDb);
});
afterAll(async () => counted.db.destroy());

const claims = (): number => counted.sent.filter((s) => s.text.includes('WITH head AS')).length;

/** A row arriving as the inbox writer stores it: committed, then announced. */
async function arrive(key: string, payload: Record<string, unknown>): Promise<void> {
  await seedInbox(testDb.db, [{ key, eventType: 'Ok', payload }]);
  await sql`SELECT pg_notify(${INBOX_CHANNEL}, '')`.execute(testDb.db);
}

function startProcessor(handler: InboxHandler<EffectDb>) {
  return startInboxProcessor<EffectDb>({
    db: counted.db,
    logger: recordingLogger(),
    listen: { connectionString: testDb.url },
    // Several idle workers, and no poll while the test runs: every claim is a NOTIFY's.
    options: { concurrency: 4, pollIntervalMs: 600_000 },
    handlers: { Ok: handler },
  });
}

it('rows that arrive one at a time cost one claim each', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(testDb.db);
  const processor = startProcessor(recordEffect);
  try {
    // The workers' first claims, which find nothing, are over before the rows come.
    await pollUntil(() => claims() >= 4, { timeoutMs: 10_000, description: 'the first claims' });
    const before = claims();
    const rows = 20;
    for (let n = 1; n <= rows; n++) {
      await arrive(`k${n}`, { n });
      await pollUntil(async () => (await count(testDb.db, 'effect')) === n, {
        timeoutMs: 10_000,
        description: `row ${n} handled`,
      });
    }
    // Before: the woken worker woke the next one on finding a row (an empty claim), then
    // claimed again itself (another): three claims per row.
    expect(claims() - before).toBeLessThanOrEqual(rows + 2);
  } finally {
    await processor.stop();
  }
});

it('a later row of a key that arrives while its head is handled is claimed at once, not at the poll', async () => {
  await sql`TRUNCATE effect, inbox_event`.execute(testDb.db);
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding = false;
  const processor = startProcessor(async (trx, event) => {
    if ((event.payload as { hold?: boolean }).hold === true) {
      holding = true;
      await held;
    }
    await recordEffect(trx, event);
  });
  try {
    await arrive('k', { n: 1, hold: true });
    await pollUntil(() => holding, { timeoutMs: 10_000, description: 'the head being handled' });
    // The head's worker claimed before this row existed. The idle worker its NOTIFY wakes finds
    // nothing (the key is busy), so only the head's worker, having heard the NOTIFY, can take it.
    const before = claims();
    await arrive('k', { n: 2 });
    await pollUntil(() => claims() > before, {
      timeoutMs: 10_000,
      description: 'an idle worker woken by the NOTIFY and its claim done',
    });
    release();
    await pollUntil(async () => (await count(testDb.db, 'effect')) === 2, {
      timeoutMs: 10_000,
      description: "the key's second row handled well before the poll",
    });
  } finally {
    release();
    await processor.stop();
  }
});
