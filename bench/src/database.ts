import { Kysely, PostgresDialect } from 'kysely';
import { createPgPool, silentLogger } from '@outbox-inbox/outbox';

/** A kysely handle for the bench's own reads and writes (a small pool: the machine has 2 cores). */
export function benchDb<DB>(connectionString: string, max = 4): Kysely<DB> {
  return new Kysely<DB>({
    dialect: new PostgresDialect({ pool: createPgPool({ connectionString, max }, silentLogger) }),
  });
}
