import type { InjectedFault } from './injected-faults.ts';

/** Restarts beyond what the scenario caused (its kills and stops, and injected deaths). */
export function restartsNotExplained(
  restarts: Readonly<Record<string, number>>,
  takenDown: Readonly<Record<string, number>>,
  deaths: readonly InjectedFault[],
): string[] {
  return Object.entries(restarts).flatMap(([component, times]) => {
    const expected =
      (takenDown[component] ?? 0) + deaths.filter((d) => d.component === component).length;
    return times > expected
      ? [`${component} restarted ${times}x, expected at most ${expected}x`]
      : [];
  });
}
