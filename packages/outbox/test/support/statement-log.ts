import { Kysely, PostgresDialect } from 'kysely';
import { createPgPool } from '../../src/index.ts';
import { recordingLogger } from './harness.ts';

/** A database handle that records every statement it sends, BEGIN and COMMIT included. */
export interface LoggedDb<DB> {
  readonly db: Kysely<DB>;
  /** The SQL of each statement sent, in order (failed ones too). */
  readonly statements: string[];
  destroy(): Promise<void>;
}

/**
 * Opens `url` with a statement log: kysely logs each query its connections run, and the
 * driver runs BEGIN and COMMIT as queries on those connections, so a transaction counts whole.
 */
export function loggedDb<DB>(url: string): LoggedDb<DB> {
  const statements: string[] = [];
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: url, max: 8 }, recordingLogger()),
    }),
    log: (event) => {
      statements.push(event.query.sql.trim().toLowerCase());
    },
  });
  return { db, statements, destroy: () => db.destroy() };
}

/** How many of `statements` match `pattern` (they are lower case, e.g. /^begin/). */
export function countMatching(statements: readonly string[], pattern: RegExp): number {
  return statements.filter((statement) => pattern.test(statement)).length;
}
