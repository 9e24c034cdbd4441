import pg from 'pg';
import type { Logger } from '../logger.ts';
import { StatementNames } from './statement-names.ts';
import { statementPreparingClient } from './statement-preparing-client.ts';

export interface PgPoolOptions {
  /**
   * Send the statements this process repeats as named prepared statements (default true).
   * PostgreSQL then parses each once per connection and, five executions after it is named,
   * may keep a plan made without the values (a generic plan) when it costs no more than
   * planning each one. Such a plan guesses ten rows for an array parameter, so a statement that
   * joins `unnest($1)` to a narrow table by its key read the whole table up to several thousand
   * rows; such a join here also says `key = ANY($1)`, which keeps that plan on the key's index
   * (test/pg-pool/array-join-plans.test.ts, and order-service's generic-plans test). The relay's
   * batches and retention's plan their statements for their values instead, in their own
   * transactions. Turn it off behind a pooler that moves one session's statements to another
   * connection (PgBouncer in transaction mode before 1.21).
   */
  readonly prepareStatements?: boolean | undefined;
}

/** A statement text is prepared on its fifth execution, as pgjdbc's `prepareThreshold` does. */
const PREPARE_AFTER_EXECUTIONS = 5;
/** At most this many texts are prepared per pool (a service sends a few dozen). */
const PREPARED_TEXTS_LIMIT = 256;
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
  });
  return pool;
}
