/**
 * Counters that only live in a role process's memory. The suite samples them while the process
 * runs, and a process that kills itself at a kill point reports them once more just before.
 */
export const processCounters = [
  'inbox_duplicates_dropped_total',
  'processed_event_duplicates_total',
] as const;

export type ProcessCounter = (typeof processCounters)[number];
export type CounterValues = Readonly<Record<ProcessCounter, number>>;

/** A counter's value in Prometheus text, summed over its labels (0 when absent). */
export function parseCounter(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`))
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** The counters from a process's Prometheus text, summed over their labels. */
export function parseProcessCounters(metricsText: string): CounterValues {
  return Object.fromEntries(
    processCounters.map((name) => [name, parseCounter(metricsText, name)]),
  ) as CounterValues;
}

async function metricsText(port: number, timeoutMs: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  return response.text();
}

/** Reads the counters from `http://127.0.0.1:<port>/metrics`. */
export async function readProcessCounters(port: number, timeoutMs = 1000): Promise<CounterValues> {
  return parseProcessCounters(await metricsText(port, timeoutMs));
}

/** Reads one counter of the role process on `port`, summed over its labels. */
export async function readCounter(port: number, name: string, timeoutMs = 1000): Promise<number> {
  return parseCounter(await metricsText(port, timeoutMs), name);
}
