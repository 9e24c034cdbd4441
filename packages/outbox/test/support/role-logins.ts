import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll } from 'vitest';
import { createPgPool, type OutboxTables } from '../../src/index.ts';
import { grantOutboxAccess, type OutboxWorkerKind } from '../../src/ops.ts';
import { recordingLogger, type TestDb } from './harness.ts';

/** A LOGIN role of the test server, and the test database as that role sees it. */
export interface RoleLogin {
  readonly role: string;
  /** The test database's URL with the role as its user (trust auth on loopback: no password). */
  readonly url: string;
  readonly db: Kysely<OutboxTables>;
}

export interface RoleLogins {
  /** A new LOGIN role named `<prefix><8 hex digits>`, with no grants; dropped after the file. */
  createRole(prefix: string): Promise<string>;
  /** A new role with what `workers` need (`grantOutboxAccess` as the owner), logged in. */
  login(prefix: string, workers: readonly OutboxWorkerKind[]): Promise<RoleLogin>;
}

/**
 * Roles for a test file's database. Roles are cluster-wide, so each gets a random name, and
 * after the file's last test its grants in the database go (`DROP OWNED BY`) and then the role.
 * Call it below `useTestDb`: `afterAll` hooks run in reverse, so the database is still there.
 */
export function useRoleLogins(testDb: TestDb): RoleLogins {
  const roles: string[] = [];
  const pools: Kysely<OutboxTables>[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((db) => db.destroy()));
    for (const role of roles) {
      await sql`DROP OWNED BY ${sql.id(role)}`.execute(testDb.db);
      await sql`DROP ROLE ${sql.id(role)}`.execute(testDb.db);
    }
  });
  const createRole = async (prefix: string): Promise<string> => {
    const role = `${prefix}${randomBytes(4).toString('hex')}`;
    await sql`CREATE ROLE ${sql.id(role)} LOGIN`.execute(testDb.db);
    roles.push(role);
    return role;
  };
  return {
    createRole,
    async login(prefix, workers) {
      const role = await createRole(prefix);
      await grantOutboxAccess(testDb.db, role, workers);
      const url = roleUrl(testDb.url, role);
      const db = new Kysely<OutboxTables>({
        dialect: new PostgresDialect({
          pool: createPgPool({ connectionString: url, max: 6 }, recordingLogger()),
        }),
      });
      pools.push(db);
      return { role, url, db };
    },
  };
}

/** A database URL with `role` as its user (the test server trusts loopback: no password). */
export function roleUrl(databaseUrl: string, role: string): string {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = '';
  return url.toString();
}
