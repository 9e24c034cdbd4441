import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';

export interface DatabaseOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly logger: Logger;
  /** How long a query waits for a connection before failing (then the API answers 503). */
  readonly connectTimeoutMs?: number;
}

/** A kysely instance on a pg pool that survives the database going away and coming back. */
export function createDatabase<DB>(options: DatabaseOptions): Kysely<DB> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
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
