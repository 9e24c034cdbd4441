import { grantOutboxAccess } from '@outbox-inbox/outbox/ops';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { RoleAccess, TableGrant } from '../service/role-declaration.ts';

/** A role's PostgreSQL login and what it may do. */
export interface RoleLogin {
  readonly login: string;
  readonly access: RoleAccess;
}

/** duplicate_object, and unique_violation when two sessions create the same role at once. */
const ROLE_EXISTS_CODES = new Set(['42710', '23505']);

/**
 * Gives each login exactly its access in this database: first everything it held on the
 * schema's tables is revoked (so a grant a declaration dropped goes too), then the library's
 * tables by worker kind and the service's tables grant by grant, in one transaction. A missing
 * login is created (roles are the cluster's, shared by every database) when the connected user
 * may create roles; otherwise it is named in a warning and left out. Run by the migrate step, as
 * the tables' owner. The logins have no password here: the server's authentication decides.
 */
export async function grantRoleLogins(
  db: Kysely<unknown>,
  logins: readonly RoleLogin[],
  logger: Logger,
): Promise<void> {
  const present = await createMissingLogins(db, logins);
  const missing = logins.filter((l) => !present.has(l.login)).map((l) => l.login);
  if (missing.length > 0) {
    logger.warn(
      { missing },
      `role logins missing and the migrate login may not create roles: ${missing.join(', ')}; their grants were left out`,
    );
  }
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(trx);
    const schema = rows[0]?.schema ?? 'public';
    for (const { login, access } of logins.filter((l) => present.has(l.login))) {
      await sql`REVOKE ALL ON ALL TABLES IN SCHEMA ${sql.id(schema)} FROM ${sql.id(login)}`.execute(
        trx,
      );
      // Every role process serves the outbox gauges on /metrics (start-service-roles.ts).
      await grantOutboxAccess(trx, login, [...access.outbox, 'metrics']);
      for (const grant of access.tables ?? []) {
        await sql`GRANT ${sql.raw(grant.privilege)}${columnList(grant)} ON TABLE ${sql.id(schema, grant.table)} TO ${sql.id(login)}`.execute(
          trx,
        );
      }
    }
  });
}

function columnList(grant: TableGrant) {
  return grant.columns === undefined
    ? sql``
    : sql` (${sql.join(grant.columns.map((column) => sql.id(column)))})`;
}

/** Creates the logins that do not exist, when allowed; returns those that exist now. */
async function createMissingLogins(
  db: Kysely<unknown>,
  logins: readonly RoleLogin[],
): Promise<Set<string>> {
  const names = logins.map((l) => l.login);
  const existing = async () => {
    const { rows } = await sql<{ name: string }>`
      SELECT rolname AS name FROM pg_roles WHERE rolname = ANY(${names}::text[])`.execute(db);
    return new Set(rows.map((row) => row.name));
  };
  const found = await existing();
  const { rows } = await sql<{ may: boolean }>`
    SELECT rolsuper OR rolcreaterole AS may FROM pg_roles WHERE rolname = current_user`.execute(db);
  if (rows[0]?.may !== true) return found;
  for (const name of names.filter((n) => !found.has(n))) {
    try {
      await sql`CREATE ROLE ${sql.id(name)} LOGIN`.execute(db);
    } catch (error) {
      // Another database's migrate created it meanwhile: it exists, which is all this needs.
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !ROLE_EXISTS_CODES.has(code)) throw error;
    }
  }
  return existing();
}
