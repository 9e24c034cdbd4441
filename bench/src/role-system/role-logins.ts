import type { Stack } from '@outbox-inbox/infra';
import pg from 'pg';

/**
 * Each role process logs in as its own PostgreSQL login (`order-relay`), which the services'
 * migrate step created with exactly the grants the role declares: the bench runs the roles with
 * the privileges a deployment gives them. `pg_stat_statements` keys its counts by login,
 * database and statement, so every statement, BEGIN and COMMIT included, splits by role. This
 * loads the extension it reads them from, and has it time planning as well as execution (a
 * prepared statement is planned at its first executions, and at every one when PostgreSQL
 * keeps no generic plan for it).
 */
export async function enableStatementCounts(stack: Stack): Promise<void> {
  const client = new pg.Client({ connectionString: stack.postgresUrl() });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
    await client.query('SELECT pg_reload_conf()');
  } finally {
    await client.end();
  }
}
