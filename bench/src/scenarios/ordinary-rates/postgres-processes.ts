import type { Stack } from '@outbox-inbox/infra';
import pg from 'pg';
import { procStat, TICKS, treePids } from '../../cpu.ts';

/** CPU-seconds of PostgreSQL's processes over a window, by what each process is. */
export type PostgresCpu = Readonly<Record<string, number>>;

/** What PostgreSQL reaped during the window: sessions that closed and autovacuum workers. */
const EXITED = 'exited meanwhile (autovacuum workers, closed sessions)';
const POSTMASTER = 'postmaster';

/**
 * Each live PostgreSQL process's label: a session's login (each role logs in as itself), or
 * the kind of a server process (`walwriter`, `autovacuum worker`, `checkpointer`...).
 */
async function processLabels(stack: Stack): Promise<Map<number, string>> {
  const client = new pg.Client({ connectionString: stack.postgresUrl() });
  await client.connect();
  try {
    const result = await client.query<{ pid: number; backend_type: string; login: string | null }>(
      'SELECT pid, backend_type, usename AS login FROM pg_stat_activity',
    );
    return new Map(
      result.rows.map((row) => [
        row.pid,
        row.backend_type === 'client backend' ? `session of ${row.login ?? '?'}` : row.backend_type,
      ]),
    );
  } finally {
    await client.end();
  }
}

interface Ticks {
  readonly own: ReadonlyMap<number, number>;
  readonly reaped: number;
}

function ticksOf(postmaster: number): Ticks {
  const own = new Map<number, number>();
  for (const pid of treePids(postmaster)) {
    const stat = procStat(pid);
    if (stat !== undefined) own.set(pid, stat.own);
  }
  return { own, reaped: procStat(postmaster)?.reaped ?? 0 };
}

/**
 * Starts counting PostgreSQL's CPU by process, for the question the whole-server figure
 * cannot answer: which role's session, or which of the server's own processes (WAL writer,
 * autovacuum), spends it. The labels are read before and after the window, outside it.
 */
export async function startPostgresCpuMeter(
  stack: Stack,
  postmaster: number,
): Promise<{ stop(): Promise<PostgresCpu> }> {
  const labelsBefore = await processLabels(stack);
  const before = ticksOf(postmaster);
  return {
    async stop() {
      const after = ticksOf(postmaster);
      const labelsAfter = await processLabels(stack);
      const byLabel: Record<string, number> = {};
      const add = (label: string, ticks: number) => {
        byLabel[label] = (byLabel[label] ?? 0) + ticks / TICKS;
      };
      for (const [pid, ticks] of after.own) {
        const label =
          pid === postmaster
            ? POSTMASTER
            : (labelsAfter.get(pid) ?? labelsBefore.get(pid) ?? 'other');
        add(label, ticks - (before.own.get(pid) ?? 0));
      }
      // A process that exited is in its parent's counters, with its whole life's CPU.
      add(EXITED, after.reaped - before.reaped);
      return byLabel;
    },
  };
}
