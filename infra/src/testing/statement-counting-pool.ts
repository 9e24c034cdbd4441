import pg from 'pg';

/** A statement a counting pool sent: its text and the rows it returned or touched. */
export interface SentStatement {
  readonly text: string;
  readonly rows: number;
}

/**
 * A pool that records every statement its connections send, for tests that count what a
 * worker costs per row. Hand it to kysely's PostgresDialect: kysely sends BEGIN, SAVEPOINT
 * and COMMIT as queries too, so each recorded statement is one round trip (node-postgres
 * does not pipeline).
 */
export function statementCountingPool(connectionString: string): {
  readonly pool: pg.Pool;
  readonly sent: SentStatement[];
} {
  const sent: SentStatement[] = [];
  const pool = new pg.Pool({ connectionString, max: 4 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (
      text: string,
      values?: unknown[],
    ) => Promise<pg.QueryResult>;
    const counted = async (text: string, values?: unknown[]): Promise<pg.QueryResult> => {
      const result = await query(text, values);
      sent.push({ text, rows: result.rowCount ?? 0 });
      return result;
    };
    Object.assign(client, { query: counted });
  });
  return { pool, sent };
}
