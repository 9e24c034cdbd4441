import type { System } from './system.ts';

/** Counters that only exist in the processes' memory: sampled so a SIGKILL loses little. */
const sampledCounters = [
  'inbox_duplicates_dropped_total',
  'processed_event_duplicates_total',
] as const;
type SampledCounter = (typeof sampledCounters)[number];

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
  let busy = false;

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
          const values = Object.fromEntries(
            sampledCounters.map((name) => [name, parseCounter(text, name)]),
          );
          lastSeen.set(`${role.component}:${pid}`, values as Record<SampledCounter, number>);
        }),
    );
  };

  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void sample().finally(() => {
      busy = false;
    });
  }, options.intervalMs ?? 250);

  const total = (name: SampledCounter): number =>
    [...lastSeen.values()].reduce((sum, values) => sum + values[name], 0);

  return {
    largestBacklog: () => largestBacklog,
    duplicatesDroppedByInbox: () => total('inbox_duplicates_dropped_total'),
    duplicatesDroppedByDedup: () => total('processed_event_duplicates_total'),
    async stop(): Promise<void> {
      clearInterval(timer);
      while (busy) await new Promise((resolve) => setTimeout(resolve, 50));
      await sample();
    },
  };
}
