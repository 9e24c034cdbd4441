import { sql, type Transaction } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';
import type { RelayOptions } from './relay-options.ts';

/**
 * Settings of one relay batch's transaction (all `SET LOCAL`, gone at its end): the timeouts
 * that bound a hung relay's row locks, and plan settings that keep the claim on its ordered
 * index scans when the statistics lag behind a backlog. After a burst or an outage the
 * planner still believes few rows are unpublished and picks a bitmap scan of ALL of them
 * plus a sort for every claim, so the claim slows down with the very backlog the relay should
 * be draining. With fresh statistics the plan is the same. The measurements are in
 * docs/benchmarks.md ("Measurements behind settings in the code").
 */
export async function configureBatchTransaction(
  trx: Transaction<OutboxTables>,
  options: Pick<
    RelayOptions,
    'lockTimeoutMs' | 'statementTimeoutMs' | 'idleInTransactionTimeoutMs'
  >,
): Promise<void> {
  await sql`SELECT
      set_config('lock_timeout', ${`${options.lockTimeoutMs}ms`}, true),
      set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true),
      set_config('idle_in_transaction_session_timeout', ${`${options.idleInTransactionTimeoutMs}ms`}, true),
      set_config('enable_bitmapscan', 'off', true),
      set_config('enable_seqscan', 'off', true)
  `.execute(trx);
}
