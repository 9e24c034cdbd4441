import pg from 'pg';
import type { Logger } from '../logger.ts';
import { StatementNames } from './statement-names.ts';
import { statementPreparingClient } from './statement-preparing-client.ts';

export interface PgPoolOptions {
  /**
   * Send the statements this process repeats as named prepared statements (default true).
   * Each execution is still planned for its values (`SET plan_cache_mode = force_custom_plan`
   * on each connection as it opens); a statement without parameters has one plan anyway. Turn
   * it off behind a pooler that moves one session's statements to another connection (PgBouncer
   * in transaction mode before 1.21).
   */
  readonly prepareStatements?: boolean | undefined;
}

/** A statement text is prepared on its fifth execution, as pgjdbc's `prepareThreshold` does. */
const PREPARE_AFTER_EXECUTIONS = 5;
/** At most this many texts are prepared per pool (a service sends a few dozen). */
const PREPARED_TEXTS_LIMIT = 256;
/**
 * After five executions PostgreSQL may keep a prepared statement's generic plan, made without
 * its values. The claims' generic plans are far worse with a backlog (the relay drained it
 * several times slower: bench/analysis.md), so every execution is planned for its values, as
 * an unnamed statement is: preparing saves the parse and analysis, never the plan.
 */
const PLAN_EACH_EXECUTION = 'SET plan_cache_mode = force_custom_plan';

/**
 * A `pg.Pool` that survives PostgreSQL restarts and keeps its repeated statements prepared.
 * An idle client whose server went away emits 'error' on the pool, and without a listener Node
 * ends the process; hand the pool to kysely's PostgresDialect and the next query simply gets a
 * fresh connection.
 */
export function createPgPool(
  config: pg.PoolConfig,
  logger: Logger,
  options: PgPoolOptions = {},
): pg.Pool {
  const prepare = options.prepareStatements !== false;
  const pool = new pg.Pool({
    keepAlive: true,
    ...config,
    ...(!prepare
      ? {}
      : {
          Client: statementPreparingClient(
            new StatementNames({
              threshold: PREPARE_AFTER_EXECUTIONS,
              capacity: PREPARED_TEXTS_LIMIT,
            }),
          ),
        }),
  });
  pool.on('error', (error) => {
    logger.warn({ err: error }, `idle PostgreSQL connection lost: ${error.message}`);
  });
  // A checked-out client (a relay transaction waiting on Kafka) has no pool listener: its
  // 'error' would end the process. Its pending query fails anyway; the pool drops it on release.
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      logger.warn({ err: error }, `PostgreSQL connection lost while in use: ${error.message}`);
    });
    // A SET, not a startup option: poolers such as PgBouncer refuse unknown startup options.
    // The client runs its queries in order, so this one runs before the first caller's.
    if (prepare) {
      client.query(PLAN_EACH_EXECUTION).catch((error: Error) => {
        logger.warn({ err: error }, `could not set plan_cache_mode: ${error.message}`);
      });
    }
  });
  return pool;
}
