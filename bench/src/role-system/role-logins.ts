import type { Stack } from '@outbox-inbox/infra';
import pg from 'pg';

/**
 * Gives each role process a PostgreSQL login of its own, named after the role (`order-relay`),
 * so `pg_stat_statements`, which keys its counts by login, database and statement, splits
 * every statement, BEGIN and COMMIT included, by the role that sent it. The logins are the
 * bench's and may do anything: the roles' own grants are not what this measures.
 */
export async function createRoleLogins(stack: Stack, logins: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: stack.postgresUrl() });
  await client.connect();
  try {
    for (const login of logins) {
      const found = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [login]);
      if (found.rowCount === 0) {
        await client.query(`CREATE ROLE "${login.replaceAll('"', '""')}" LOGIN SUPERUSER`);
      }
    }
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  } finally {
    await client.end();
  }
}

/**
 * `databaseUrl` as `login` would connect. It sets no application_name: each role process names
 * itself to `pg_stat_activity`, and B9 checks that it does.
 */
export function urlAs(databaseUrl: string, login: string): string {
  const url = new URL(databaseUrl);
  url.username = login;
  url.password = '';
  return url.toString();
}
