import type { SystemProcess } from './system.ts';

/** What `/health/ready` answered, or undefined when the process did not answer in time. */
export interface Readiness {
  readonly httpStatus: number;
  readonly status: string;
  readonly workers: Readonly<Record<string, { status: string; reason?: string }>>;
}

export async function probeReady(
  role: SystemProcess,
  timeoutMs = 1000,
): Promise<Readiness | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${role.port}/health/ready`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json()) as {
      status?: string;
      checks?: { workers?: Readiness['workers'] };
    };
    return {
      httpStatus: response.status,
      status: body.status ?? '',
      workers: body.checks?.workers ?? {},
    };
  } catch {
    return undefined;
  }
}

/** The process's `/metrics` text, or undefined when it did not answer in time. */
export async function scrapeMetrics(
  role: SystemProcess,
  timeoutMs = 2000,
): Promise<string | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${role.port}/metrics`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return await response.text();
  } catch {
    return undefined;
  }
}

/** Every sample of metric `name` in a Prometheus text exposition, with its labels. */
export function metricSamples(
  text: string,
  name: string,
): { labels: Record<string, string>; value: number }[] {
  const samples: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (!(line.startsWith(`${name} `) || line.startsWith(`${name}{`))) continue;
    const labels: Record<string, string> = {};
    const labelText = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    for (const [, key = '', value = ''] of labelText.matchAll(/(\w+)="([^"]*)"/g)) {
      labels[key] = value;
    }
    samples.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return samples;
}

/** The sum of metric `name` over its samples (0 when absent). */
export function metricTotal(text: string, name: string): number {
  return metricSamples(text, name).reduce((sum, sample) => sum + sample.value, 0);
}

/** Runs a retention role completed, from its `/metrics` text. */
export function completedRetentionRuns(text: string): number {
  return metricSamples(text, 'outbox_retention_runs_total')
    .filter((sample) => sample.labels['outcome'] === 'completed')
    .reduce((sum, sample) => sum + sample.value, 0);
}
