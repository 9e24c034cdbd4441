/** Nearest-rank percentile of unsorted numbers (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  // A NaN would break the sort's ordering; missing values are simply not counted.
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: readonly number[];
}

export function spread(runs: readonly number[]): Spread {
  return {
    median: percentile(runs, 50),
    min: Math.min(...runs),
    max: Math.max(...runs),
    runs,
  };
}

/** `12 345` style integers, `0.62` style ratios: tables stay readable. */
export function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** "median (min–max)" of a spread, formatted by `format`. */
export function showSpread(s: Spread, format: (v: number) => string = int): string {
  return s.runs.length > 1
    ? `${format(s.median)} (${format(s.min)}–${format(s.max)})`
    : format(s.median);
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
