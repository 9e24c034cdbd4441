import type { System } from './system.ts';

/** Counters that only exist in the processes' memory: sampled so a SIGKILL loses little. */
type SampledCounter = 'inbox_duplicates_dropped_total' | 'processed_event_duplicates_total';

function parseCounter(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function unpublished(pool: System['orderDb']): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Samples, while a scenario runs, what the end state cannot show: the largest outbox backlog,
 * and the duplicate counters of every process incarnation (the last value each pid reported;
 * a process killed between samples loses at most one interval of counts, so these are lower
 * bounds).
 */
export function observe(system: System, options: { intervalMs?: number } = {}) {
  let largestBacklog = 0;
  const lastSeen = new Map<string, Record<SampledCounter, number>>();
  let stopped: Promise<void> | undefined;

  const sample = async (): Promise<void> => {
    const backlogs = await Promise.allSettled([
      unpublished(system.orderDb),
      unpublished(system.paymentDb),
    ]);
    const backlog = backlogs.reduce(
      (sum, result) => sum + (result.status === 'fulfilled' ? result.value : 0),
      0,
    );
    largestBacklog = Math.max(largestBacklog, backlog);
    await Promise.allSettled(
      system.roles
        .filter((role) => role.role === 'consumer')
        .map(async (role) => {
          const pid = system.stack.pid(role.component);
          if (pid === undefined) return;
          const response = await fetch(`http://127.0.0.1:${role.port}/metrics`, {
            signal: AbortSignal.timeout(1000),
          });
          const text = await response.text();
          lastSeen.set(`${role.component}:${pid}`, {
            inbox_duplicates_dropped_total: parseCounter(text, 'inbox_duplicates_dropped_total'),
            processed_event_duplicates_total: parseCounter(
              text,
              'processed_event_duplicates_total',
            ),
          });
        }),
    );
  };

  // One sample at a time: a slow scrape is never overlapped by the next tick.
  let inFlight: Promise<void> | undefined;
  const sampleOnce = (): Promise<void> =>
    (inFlight ??= sample().finally(() => {
      inFlight = undefined;
    }));
  const timer = setInterval(() => void sampleOnce(), options.intervalMs ?? 250);

  const total = (name: SampledCounter): number =>
    [...lastSeen.values()].reduce((sum, values) => sum + values[name], 0);

  return {
    largestBacklog: () => largestBacklog,
    duplicatesDroppedByInbox: () => total('inbox_duplicates_dropped_total'),
    duplicatesDroppedByDedup: () => total('processed_event_duplicates_total'),
    /** Stops sampling after one last sample; calling it again changes nothing. */
    stop(): Promise<void> {
      clearInterval(timer);
      stopped ??= (inFlight ?? Promise.resolve()).then(() => sample());
      return stopped;
    },
  };
}
