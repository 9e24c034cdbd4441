/** Capped exponential backoff; the delay is drawn uniformly from [delay/2, delay] (jitter). */
export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly multiplier: number;
}

/** Delay before retry number `attempt` (1 = first retry). */
export function backoffDelay(
  options: BackoffOptions,
  attempt: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const ceiling = Math.min(options.maxMs, options.initialMs * options.multiplier ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
