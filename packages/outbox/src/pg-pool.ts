import pg from 'pg';
import type { Logger } from './logger.ts';

/**
 * A `pg.Pool` that survives PostgreSQL restarts: an idle client whose server went away emits
 * 'error' on the pool, and without a listener Node ends the process. Hand it to kysely's
 * PostgresDialect; the next query simply gets a fresh connection.
 */
export function createPgPool(config: pg.PoolConfig, logger: Logger): pg.Pool {
  const pool = new pg.Pool({ keepAlive: true, ...config });
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
