import { afterAll, beforeAll, expect, it } from 'vitest';
import { CompiledQuery, Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import { createPgPool, type OutboxTables } from '../../src/index.ts';
import { beginBatchTransaction } from '../../src/relay/batch-transaction.ts';
import { claimBatch } from '../../src/relay/claim-batch.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { recordingLogger, useTestDb } from '../support/harness.ts';

const testDb = useTestDb('claim_plan');
/** The same database through a Kysely that remembers every statement it ran. */
let traced: Kysely<OutboxTables>;
const statements: CompiledQuery[] = [];

beforeAll(async () => {
  traced = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: testDb.url, max: 2 }, recordingLogger()),
    }),
    log: (event) => void (event.level === 'query' && statements.push(event.query)),
  });
  // Statistics of an empty outbox, then a backlog they know nothing about: what the relay
  // meets after a burst or a Kafka outage, until autovacuum analyzes the table.
  await sql`VACUUM ANALYZE outbox_event`.execute(testDb.db);
  await sql`
    INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, topic, partition_key)
    SELECT gen_random_uuid(), 'order', 'key-' || (i % 1000), 'OrderCreated',
      jsonb_build_object('n', i), 'orders', 'key-' || (i % 1000)
    FROM generate_series(1, 50000) AS i`.execute(testDb.db);
});

afterAll(async () => {
  await traced.destroy();
});

/** The plan node types of the claim's first (heads) statement, EXPLAINed in `trx`. */
async function headsPlanNodes(trx: Transaction<OutboxTables>): Promise<string[]> {
  statements.length = 0;
  await claimBatch(trx, DEFAULT_RELAY_OPTIONS);
  const heads = statements.find((q) => q.sql.includes('WITH candidate'));
  if (heads === undefined) throw new Error('the heads query was not seen');
  const explained = await trx.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${heads.sql}`, [...heads.parameters]),
  );
  const nodes: string[] = [];
  const walk = (node: { 'Node Type': string; Plans?: unknown[] }) => {
    nodes.push(node['Node Type']);
    for (const child of node.Plans ?? []) walk(child as typeof node);
  };
  const plan = explained.rows[0]?.['QUERY PLAN'] as [{ Plan: Parameters<typeof walk>[0] }];
  walk(plan[0].Plan);
  return nodes;
}

it('with statistics behind a backlog, the relay transaction keeps the claim on index scans', async () => {
  // The control: without the relay's settings the planner takes the bitmap scan of the whole
  // backlog (if it stops doing so, this test no longer proves anything and says so).
  const unconfigured = await traced.transaction().execute((trx) => headsPlanNodes(trx));
  expect(unconfigured).toContain('Bitmap Heap Scan');

  const configured = await traced.transaction().execute(async (trx) => {
    // Inside a transaction already: its BEGIN only warns, its settings apply to this one.
    await beginBatchTransaction(trx, DEFAULT_RELAY_OPTIONS);
    return headsPlanNodes(trx);
  });
  expect(configured).not.toContain('Bitmap Heap Scan');
  expect(configured).not.toContain('Seq Scan');
  expect(configured).toContain('Index Scan');
});
