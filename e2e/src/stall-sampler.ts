import { metricSamples, scrapeMetrics } from './role-probes.ts';
import type { System } from './system.ts';

/** A worker a process reported stalled (`outbox_worker_stalled{worker} 1`), and when. */
export interface StallSighting {
  readonly component: string;
  readonly worker: string;
  readonly at: number;
}

/**
 * Scrapes every role process's `outbox_worker_stalled` while a scenario runs: the stalls the
 * processes themselves reported. A process that does not answer (frozen, restarting) is skipped.
 */
export function sampleStalls(system: System, options: { intervalMs?: number } = {}) {
  const sightings: StallSighting[] = [];
  const sample = async (): Promise<void> => {
    await Promise.all(
      system.roles.map(async (role) => {
        const text = await scrapeMetrics(role, 1500);
        if (text === undefined) return;
        for (const { labels, value } of metricSamples(text, 'outbox_worker_stalled')) {
          if (value === 1)
            sightings.push({
              component: role.name,
              worker: labels['worker'] ?? '',
              at: Date.now(),
            });
        }
      }),
    );
  };
  let inFlight: Promise<void> | undefined;
  const timer = setInterval(() => {
    inFlight ??= sample().finally(() => (inFlight = undefined));
  }, options.intervalMs ?? 500);
  return {
    sightings: (): readonly StallSighting[] => [...sightings],
    async stop(): Promise<void> {
      clearInterval(timer);
      await inFlight;
    },
  };
}
