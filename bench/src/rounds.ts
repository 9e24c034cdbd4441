import { spread, type Spread } from './stats.ts';

/**
 * Side by side: every variant runs once per round, the order rotating from round to round
 * (A B C, then B C A, then C A B, …), so no variant always runs first, on a cooler machine or a
 * colder cache. Returns each variant's runs in round order, so a ratio can be taken within a
 * round (see {@link ratioPerRound}).
 */
export async function runRounds<V, R>(
  variants: readonly V[],
  rounds: number,
  run: (variant: V, round: number) => Promise<R>,
): Promise<Map<V, R[]>> {
  const runs = new Map<V, R[]>(variants.map((variant) => [variant, []]));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(k + round) % variants.length];
      if (variant === undefined) continue;
      const result = await run(variant, round);
      runs.get(variant)?.push(result);
    }
  }
  return runs;
}

/** The runs of one variant (none when it never ran). */
export function runsOf<V, R>(runs: ReadonlyMap<V, readonly R[]>, variant: V): readonly R[] {
  return runs.get(variant) ?? [];
}

/** a / b within each round, then the median with min–max over the rounds. */
export function ratioPerRound(a: readonly number[], b: readonly number[]): Spread {
  return spread(a.map((value, round) => value / (b[round] ?? Number.NaN)));
}
