import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import {
  createPgPool,
  enqueue,
  migrateOutbox,
  silentLogger,
  type OutboxTables,
} from '../../src/index.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { claimInboxRows } from '../../src/inbox-processor/claim-inbox-rows.ts';
import { beginBatchTransaction } from '../../src/relay/batch-transaction.ts';
import { claimBatch } from '../../src/relay/claim-batch.ts';
import { stack } from '../support/harness.ts';
import { insertInboxBacklog } from '../support/inbox-backlog.ts';

/*
 * After five custom plans PostgreSQL may run a prepared statement on a generic plan: one
 * planned without its parameters' values, and kept. That saves planning every execution, and
 * the pool lets it happen. The claims' generic plans were worse (the inbox claim's anti-joined
 * every unprocessed row instead of probing each candidate's key), so both claims have no
 * parameters (their sizes are literals): their one plan is made with them. The relay's
 * followers query keeps being planned for its values, by its batch transaction's setting.
 */

const EXECUTIONS = 12; // named on the fifth (createPgPool): the last eight run prepared

let db: Kysely<OutboxTables>;
let plans: string[];
beforeAll(async () => {
  const url = await stack().createDatabase(`generic_${randomUUID().slice(0, 8)}`);
  // One connection: its session settings hold for every claim, and auto_explain sends each
  // statement's plan back to it as a notice.
  const pool = createPgPool({ connectionString: url, max: 1 }, silentLogger);
  plans = [];
  pool.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
  db = new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool }) });
  await migrateOutbox(db);
  await insertInboxBacklog(db);
  await sql`INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type,
      payload, headers, topic, partition_key, published_at)
    SELECT gen_random_uuid(), 'order', g::text, 'OrderCreated', '{}', '{}', 't',
      'k' || (g % 500), CASE WHEN g <= 20000 THEN now() END
    FROM generate_series(1, 21000) g`.execute(db);
  await sql`ANALYZE inbox_event`.execute(db);
  await sql`ANALYZE outbox_event`.execute(db);
  await sql`LOAD 'auto_explain'`.execute(db);
  await sql`SET auto_explain.log_min_duration = 0`.execute(db);
  await sql`SET auto_explain.log_level = notice`.execute(db);
});
afterAll(async () => {
  await db.destroy();
});

/** The plans the connection's prepared statement whose text includes `marker` ran on. */
async function plansOf(marker: string): Promise<{ generic: number; custom: number }> {
  const { rows } = await sql<{ generic: number; custom: number }>`
    SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
    WHERE NOT from_sql AND strpos(statement, ${marker}) > 0
  `.execute(db);
  return rows[0] ?? { generic: -1, custom: -1 };
}

function lastPlanOf(fragment: string): string {
  return plans.findLast((text) => text.includes(fragment)) ?? '(no plan)';
}

it('plans the prepared inbox claim once, with its sizes: the unprocessed indexes, probed per key', async () => {
  for (let n = 1; n <= EXECUTIONS; n++) {
    plans.length = 0;
    const { rows } = await claimInboxRows(db, { limit: 16, maxAttempts: 5, leaseMs: 30_000 });
    expect(rows).toHaveLength(16);
  }
  expect(await plansOf('WITH head AS')).toEqual({ generic: EXECUTIONS - 4, custom: 0 });
  const plan = lastPlanOf('inbox_event');
  expect(plan).toContain('Index Scan using ix_inbox_event_unprocessed on inbox_event i');
  expect(plan).toContain('Index Scan using ix_inbox_event_unprocessed_key on inbox_event older');
  expect(plan).not.toContain('Seq Scan');
});

it('plans the prepared relay heads claim once, ordered by the unpublished index', async () => {
  for (let n = 1; n <= EXECUTIONS; n++) {
    plans.length = 0;
    const batch = await db.transaction().execute(async (trx) => {
      // Inside a transaction already: its BEGIN only warns, its settings apply to this one.
      await beginBatchTransaction(trx, DEFAULT_RELAY_OPTIONS);
      return claimBatch(trx, { batchSize: 500, scanWindow: 2000, maxBatchBytes: 1_000_000 });
    });
    // The 1000 unpublished rows are two per key: 500 heads fill the batch.
    expect(batch.events).toHaveLength(500);
  }
  // No parameters (its sizes are literals): planned once, in the first prepared execution's
  // transaction, and that plan kept; no execution pays for planning.
  expect(await plansOf('WITH candidate AS')).toEqual({ generic: EXECUTIONS - 4, custom: 0 });
  const plan = lastPlanOf('outbox_event c');
  expect(plan).toContain('Index Scan using ix_outbox_event_unpublished on outbox_event c');
  expect(plan).not.toContain('Seq Scan');
  expect(plan).not.toContain('Bitmap');
});

it('plans each execution of the relay followers query, in the batch transaction that sets it', async () => {
  for (let n = 1; n <= EXECUTIONS; n++) {
    const batch = await db.transaction().execute(async (trx) => {
      await beginBatchTransaction(trx, DEFAULT_RELAY_OPTIONS);
      // 500 heads (one per key) leave room for 100 followers, their keys' second rows.
      return claimBatch(trx, { batchSize: 600, scanWindow: 2000, maxBatchBytes: 1_000_000 });
    });
    expect(batch.events).toHaveLength(600);
  }
  expect(await plansOf('o.id <> ALL(')).toEqual({ generic: 0, custom: EXECUTIONS - 4 });
});

it('keeps a generic plan for a parameterised statement outside the relay batch: no planning per execution', async () => {
  for (let n = 1; n <= EXECUTIONS; n++) {
    await db.transaction().execute((trx) =>
      enqueue(
        trx,
        {
          topic: 't',
          aggregateType: 'order',
          aggregateId: `a${n}`,
          partitionKey: `a${n}`,
          eventType: 'OrderCreated',
          payload: {},
        },
        { notify: false },
      ),
    );
  }
  const enqueuePlans = await plansOf('AS e(event_id');
  expect(enqueuePlans.generic + enqueuePlans.custom).toBe(EXECUTIONS - 4);
  expect(enqueuePlans.generic).toBeGreaterThan(0);
});
