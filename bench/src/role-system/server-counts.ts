import type { Stack } from '@outbox-inbox/infra';
import pg from 'pg';

/** What one login sent, counted by `pg_stat_statements` since the last reset. */
export interface LoginCounts {
  readonly login: string;
  /** Statements executed (each statement of a multi-statement query string counts). */
  readonly statements: number;
  /** COMMITs, i.e. explicit transactions. */
  readonly commits: number;
  /** WAL records its statements wrote (a commit with an xid writes one more). */
  readonly walRecords: number;
  readonly walBytes: number;
  /** Milliseconds PostgreSQL spent executing its statements (planning not included). */
  readonly execMs: number;
  /** Milliseconds PostgreSQL spent planning them (`pg_stat_statements.track_planning`). */
  readonly planMs: number;
  /** Its statements, most executed first. */
  readonly top: readonly {
    readonly calls: number;
    readonly execMs: number;
    readonly planMs: number;
    readonly query: string;
  }[];
}

/** Cluster-wide WAL activity (`pg_stat_wal`): flushes cannot be told apart by login. */
export interface WalCounts {
  readonly records: number;
  /** WAL writes and syncs (fsyncs of the WAL: what a durable commit waits for). */
  readonly writes: number;
  readonly syncs: number;
}

async function withServer<T>(stack: Stack, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: stack.postgresUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Zeroes `pg_stat_statements` and returns the WAL counters to subtract later. */
export function resetCounts(stack: Stack): Promise<WalCounts> {
  return withServer(stack, async (client) => {
    await client.query('SELECT pg_stat_statements_reset()');
    return readWal(client);
  });
}

async function readWal(client: pg.Client): Promise<WalCounts> {
  const result = await client.query<{ records: string; writes: string; syncs: string }>(
    'SELECT wal_records AS records, wal_write AS writes, wal_sync AS syncs FROM pg_stat_wal',
  );
  const row = result.rows[0];
  return {
    records: Number(row?.records ?? 0),
    writes: Number(row?.writes ?? 0),
    syncs: Number(row?.syncs ?? 0),
  };
}

/** Counts per login since `resetCounts`, and the WAL counters' growth since `before`. */
export function readCounts(
  stack: Stack,
  logins: readonly string[],
  before: WalCounts,
): Promise<{ logins: LoginCounts[]; wal: WalCounts }> {
  return withServer(stack, async (client) => {
    const result = await client.query<{
      login: string;
      calls: string;
      wal_records: string;
      wal_bytes: string;
      exec_ms: number;
      plan_ms: number;
      query: string;
    }>(
      `SELECT r.rolname AS login, s.calls, s.wal_records, s.wal_bytes,
         s.total_exec_time AS exec_ms, s.total_plan_time AS plan_ms, s.query
       FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
       WHERE r.rolname = ANY($1::text[])
       ORDER BY s.calls DESC`,
      [logins],
    );
    const counts = logins.map((login): LoginCounts => {
      const rows = result.rows.filter((row) => row.login === login);
      const sum = (pick: (row: (typeof rows)[number]) => string) =>
        rows.reduce((total, row) => total + Number(pick(row)), 0);
      return {
        login,
        statements: sum((row) => row.calls),
        commits: sum((row) => (/^\s*commit\s*;?\s*$/i.test(row.query) ? row.calls : '0')),
        walRecords: sum((row) => row.wal_records),
        walBytes: sum((row) => row.wal_bytes),
        execMs: rows.reduce((total, row) => total + Number(row.exec_ms), 0),
        planMs: rows.reduce((total, row) => total + Number(row.plan_ms), 0),
        top: rows.map((row) => ({
          calls: Number(row.calls),
          execMs: Number(row.exec_ms),
          planMs: Number(row.plan_ms),
          query: row.query,
        })),
      };
    });
    const after = await readWal(client);
    return {
      logins: counts,
      wal: {
        records: after.records - before.records,
        writes: after.writes - before.writes,
        syncs: after.syncs - before.syncs,
      },
    };
  });
}
