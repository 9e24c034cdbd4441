import { readInjectedFaults } from './faults/injected-faults.ts';
import {
  readProcessCounters,
  type CounterValues,
  type ProcessCounter,
} from './process-counters.ts';
import type { System } from './system.ts';

async function unpublished(pool: System['orderDb']): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Unpublished outbox rows in both databases (none counted in CDC mode); a database that does
 * not answer counts 0.
 */
async function outboxBacklog(system: System, cdc: boolean): Promise<number> {
  const backlogs = await Promise.allSettled(
    cdc ? [] : [unpublished(system.orderDb), unpublished(system.paymentDb)],
  );
  return backlogs.reduce(
    (sum, result) => sum + (result.status === 'fulfilled' ? result.value : 0),
    0,
  );
}

/** Reads the counters of each consumer running now into `lastSeen`, under `role:pid`. */
async function sampleConsumerCounters(
  system: System,
  lastSeen: Map<string, CounterValues>,
): Promise<void> {
  await Promise.allSettled(
    system.roles
      .filter((role) => role.role === 'consumer')
      .map(async (role) => {
        const pid = system.stack.pid(role.name);
        if (pid === undefined) return;
        lastSeen.set(`${role.name}:${pid}`, await readProcessCounters(role.port));
      }),
  );
}

/**
 * Samples, while a scenario runs, what the end state cannot show: the largest outbox backlog,
 * and the duplicate counters of every process incarnation (the last value each pid reported,
 * or what it reported as it killed itself; a process the suite kills is sampled just before,
 * so what it counted after that is lost and the totals are lower bounds).
 */
export function observe(system: System, options: { intervalMs?: number } = {}) {
  let largestBacklog = 0;
  const lastSeen = new Map<string, CounterValues>();
  let stopped: Promise<void> | undefined;

  // In CDC mode every row is "unpublished": counting them scans both tables for nothing.
  const cdc = system.relayMode === 'cdc';
  const sample = async (): Promise<void> => {
    const backlog = await outboxBacklog(system, cdc);
    largestBacklog = Math.max(largestBacklog, backlog);
    await sampleConsumerCounters(system, lastSeen);
  };

  // One sample at a time: a slow scrape is never overlapped by the next tick.
  let inFlight: Promise<void> | undefined;
  const sampleOnce = (): Promise<void> =>
    (inFlight ??= sample().finally(() => {
      inFlight = undefined;
    }));
  const timer = setInterval(() => void sampleOnce(), options.intervalMs ?? 250);

  // A process that killed itself reported its counters once more just before (its last
  // words in the fault log): per incarnation the larger of that and the last sample counts.
  const total = (name: ProcessCounter): number => {
    const latest = new Map([...lastSeen].map(([key, values]) => [key, values[name]]));
    for (const { component, pid, counters } of readInjectedFaults(system.faultLog)) {
      if (pid === undefined || counters === undefined) continue;
      const key = `${component}:${pid}`;
      latest.set(key, Math.max(latest.get(key) ?? 0, counters[name]));
    }
    return [...latest.values()].reduce((sum, value) => sum + value, 0);
  };

  return {
    largestBacklog: () => (system.relayMode === 'cdc' ? null : largestBacklog),
    duplicatesDroppedByInbox: () => total('inbox_duplicates_dropped_total'),
    duplicatesDroppedByDedup: () => total('processed_event_duplicates_total'),
    /**
     * Samples now (before the suite kills a process, so its counts are not lost). A sample
     * already under way may have read the victim before its last count, so this one waits for
     * it and reads again: only what the victim counts in the moment before the kill is lost.
     */
    sampleNow: async (): Promise<void> => {
      await inFlight;
      await sampleOnce();
    },
    /** Stops sampling after one last sample; calling it again changes nothing. */
    stop(): Promise<void> {
      clearInterval(timer);
      stopped ??= (inFlight ?? Promise.resolve()).then(() => sample());
      return stopped;
    },
  };
}
