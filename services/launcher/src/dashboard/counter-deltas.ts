/**
 * Turns counters scraped from processes into increments. A process that restarts starts its
 * counters at zero again: a value below the last one counts in full, never as a negative step.
 */
export class CounterDeltas {
  readonly #last = new Map<string, number>();

  /** What `key` (a process and a counter) gained since the last call; 0 the first time. */
  step(key: string, value: number): number {
    const last = this.#last.get(key);
    this.#last.set(key, value);
    if (last === undefined) return 0;
    return value >= last ? value - last : value;
  }
}
