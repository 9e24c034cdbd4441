import { createPgPool } from '@outbox-inbox/outbox';
import { Kysely, PostgresDialect } from 'kysely';
import type { Logger } from 'pino';

export interface DatabaseOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly logger: Logger;
  /** How long a query waits for a connection before failing (then the API answers 503). */
  readonly connectTimeoutMs?: number;
  /** Keep repeated statements prepared on each connection (default true). */
  readonly prepareStatements?: boolean | undefined;
}

/** A kysely instance on a pg pool that survives the database going away and coming back. */
export function createDatabase<DB>(options: DatabaseOptions): Kysely<DB> {
  const pool = createPgPool(
    {
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
      idleTimeoutMillis: 30_000,
    },
    options.logger,
    { prepareStatements: options.prepareStatements },
  );
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}
