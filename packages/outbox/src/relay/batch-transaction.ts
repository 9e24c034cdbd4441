import { sql, type Kysely } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';
import type { RelayOptions } from './relay-options.ts';

/**
 * Opens one relay batch's transaction with its settings (all local to it, gone at its end),
 * in one round trip: BEGIN and the settings go as one query string, which the simple protocol
 * allows for a text without parameters. The settings are the timeouts that bound a hung
 * relay's row locks, and plan settings that keep the claim on its ordered index scans when
 * the statistics lag behind a backlog. After a burst or an outage the planner still believes
 * few rows are unpublished and picks a bitmap scan of ALL of them plus a sort for every claim,
 * so the claim slows down with the very backlog the relay should be draining. With fresh
 * statistics the plan is the same. The measurements are in docs/benchmarks.md
 * ("Measurements behind settings in the code"). And each execution of the followers query
 * (arrays of keys, a LIMIT of the room left) is planned for its values: a claim's generic plan
 * once drained a backlog five times slower (bench/analysis.md), and the followers query runs
 * only under a backlog, where a plan is cheap beside its work. The heads claim has no
 * parameters and keeps its one plan whatever this says. Not session settings: the relay's
 * pool may serve other roles of the same process, whose statements must not inherit them.
 */
export async function beginBatchTransaction(
  connection: Kysely<OutboxTables>,
  options: Pick<
    RelayOptions,
    'lockTimeoutMs' | 'statementTimeoutMs' | 'idleInTransactionTimeoutMs'
  >,
): Promise<void> {
  const ms = (value: number) => `'${Math.trunc(value)}ms'`;
  await sql
    .raw(
      `BEGIN; SELECT
      set_config('lock_timeout', ${ms(options.lockTimeoutMs)}, true),
      set_config('statement_timeout', ${ms(options.statementTimeoutMs)}, true),
      set_config('idle_in_transaction_session_timeout', ${ms(options.idleInTransactionTimeoutMs)}, true),
      set_config('enable_bitmapscan', 'off', true),
      set_config('enable_seqscan', 'off', true),
      set_config('plan_cache_mode', 'force_custom_plan', true)`,
    )
    .execute(connection);
}

/**
 * Runs `work` in one relay batch's transaction on one pooled connection (opened by
 * `beginBatchTransaction`): committed when `work` returns, rolled back when it throws.
 */
export async function inBatchTransaction<T>(
  db: Kysely<OutboxTables>,
  options: Parameters<typeof beginBatchTransaction>[1],
  work: (connection: Kysely<OutboxTables>) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    let result: T;
    try {
      await beginBatchTransaction(connection, options);
      result = await work(connection);
    } catch (error) {
      // Also after a failed BEGIN string: its BEGIN may have run, and the connection goes
      // back to the pool.
      await sql`ROLLBACK`.execute(connection).catch(() => undefined);
      throw error;
    }
    await sql`COMMIT`.execute(connection);
    return result;
  });
}
