/** One line of a Prometheus text exposition: a metric name, its labels and its value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * Reads the samples of a `/metrics` answer. Comments and lines it cannot read are left out:
 * the dashboard shows what it understands and never fails on a scrape.
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) continue;
    const [, name = '', labelText = '', valueText = ''] = match;
    const value = Number(valueText);
    if (Number.isNaN(value)) continue;
    const labels: Record<string, string> = {};
    for (const label of labelText.matchAll(LABEL)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, (_, c: string) =>
        c === 'n' ? '\n' : c,
      );
    }
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `match`. */
export function sumOf(
  samples: readonly Sample[],
  name: string,
  match: Readonly<Record<string, string>> = {},
): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
