import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { StatementNames } from './statement-names.ts';
import { statementPreparingClient } from './statement-preparing-client.ts';

export interface DatabaseOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly logger: Logger;
  /** How long a query waits for a connection before failing (then the API answers 503). */
  readonly connectTimeoutMs?: number;
  /**
   * Send the statements this process repeats as named prepared statements (default true).
   * Turn it off behind a pooler that hands one session's statements to another connection
   * (PgBouncer in transaction mode before 1.21).
   */
  readonly prepareStatements?: boolean;
}

/** A statement text is prepared on its fifth execution, as pgjdbc's `prepareThreshold` does. */
const PREPARE_AFTER_EXECUTIONS = 5;
/** At most this many texts are prepared per process (a service sends a few dozen). */
const PREPARED_TEXTS_LIMIT = 256;

/** A kysely instance on a pg pool that survives the database going away and coming back. */
export function createDatabase<DB>(options: DatabaseOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
    ...(options.prepareStatements === false
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
  // An idle client whose server died emits 'error' on the pool; unhandled, it would crash the
  // process. The pool drops that client and the next query connects again.
  pool.on('error', (error) => {
    options.logger.warn({ err: error }, 'idle database connection lost');
  });
  // A client checked out of the pool (a transaction waiting on Kafka, a LISTEN) has no pool
  // listener: when the server dies it emits 'error' on itself, which would crash the process.
  // Its pending query is rejected anyway, and the pool discards it once it is released.
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      options.logger.warn({ err: error }, 'database connection lost while in use');
    });
  });
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
