import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { createDatabase } from './create-database.ts';

/**
 * Connects with a one-connection pool, runs `work`, disconnects even when it fails: for
 * start-up scripts and tests (a migration) that must not leave a pool open.
 */
export async function withOneConnection<T>(
  options: { url: string; logger: Logger },
  work: (db: Kysely<unknown>) => Promise<T>,
): Promise<T> {
  const db = createDatabase<unknown>({ url: options.url, poolSize: 1, logger: options.logger });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}
