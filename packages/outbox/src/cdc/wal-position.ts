/** A WAL position (`pg_lsn`, written `16/B374D848`) as a number of bytes from the start. */
export function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  if (high === undefined || low === undefined) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

interface WalSample {
  readonly at: number;
  readonly position: bigint;
}

export interface WalTimelineOptions {
  /** Most samples kept while the slot stays behind (default 128, at least 3). */
  readonly maxSamples?: number;
}

const DEFAULT_MAX_SAMPLES = 128;

/**
 * How far behind in time a replication slot is: when did the server's WAL last stand where the
 * slot has confirmed? PostgreSQL knows a logical slot's lag in bytes only, so the watch samples
 * the server's current position now and then and keeps the samples the slot has not passed.
 *
 * A slot that stays behind would keep every sample, so past `maxSamples` one sample is merged
 * into its older neighbour each time. Dropping a sample can only move the answer to an older
 * one: the lag in seconds is never understated, and is overstated by at most the gap between
 * the two kept samples around the confirmed position. The sample dropped is the one whose gap
 * is smallest next to its age, so recent samples stay at full resolution and old ones thin out
 * roughly geometrically: the overstatement stays a small fraction of the lag however long the
 * slot is behind, and shrinks as `maxSamples` grows.
 */
export class WalTimeline {
  readonly #samples: WalSample[] = [];
  readonly #maxSamples: number;

  constructor(options: WalTimelineOptions = {}) {
    const maxSamples = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
    // Fewer than 3 leaves no sample between the oldest and the newest to merge.
    if (!Number.isInteger(maxSamples) || maxSamples < 3) {
      throw new RangeError(`maxSamples must be an integer of at least 3 (got ${maxSamples})`);
    }
    this.#maxSamples = maxSamples;
  }

  /** How many samples it holds: never more than `maxSamples`. */
  get size(): number {
    return this.#samples.length;
  }

  /** Notes where the server's WAL stands at `at` (ms). */
  sample(at: number, position: bigint): void {
    this.#samples.push({ at, position });
    if (this.#samples.length > this.#maxSamples) this.#samples.splice(this.#cheapestMerge(), 1);
  }

  /**
   * Seconds since the WAL last stood at or before `confirmed`; 0 when the slot has confirmed
   * the latest sample. When the slot is behind every sample, the age of the oldest one: a
   * lower bound.
   */
  secondsBehind(confirmed: bigint, now: number): number {
    const latest = this.#samples[this.#samples.length - 1];
    if (latest === undefined || confirmed >= latest.position) {
      this.#samples.splice(0, Math.max(0, this.#samples.length - 1));
      return 0;
    }
    let passed = -1;
    for (let index = 0; index < this.#samples.length; index++) {
      if ((this.#samples[index]?.position ?? 0n) <= confirmed) passed = index;
    }
    // Samples before the last one the slot passed are of no further use.
    if (passed > 0) this.#samples.splice(0, passed);
    const since = this.#samples[0]?.at ?? now;
    return Math.max(0, (now - since) / 1000);
  }

  /**
   * The index of the sample whose removal costs the least accuracy: the widened gap over the
   * age of its newer end, which is the most the answer can then be off by, relative to the lag.
   * The oldest sample (the answer for a slot behind them all) and the newest are always kept.
   */
  #cheapestMerge(): number {
    const samples = this.#samples;
    const newest = samples[samples.length - 1]?.at ?? 0;
    let cheapest = 1;
    let lowestCost = Number.POSITIVE_INFINITY;
    for (let index = 1; index < samples.length - 1; index++) {
      const older = samples[index - 1];
      const sample = samples[index];
      const newer = samples[index + 1];
      if (older === undefined || sample === undefined || newer === undefined) continue;
      const age = newest - newer.at;
      // A sample the next one stands level with is never the answer: dropping it costs nothing.
      const cost =
        newer.position === sample.position
          ? 0
          : age > 0
            ? (newer.at - older.at) / age
            : Number.POSITIVE_INFINITY;
      if (cost < lowestCost) {
        lowestCost = cost;
        cheapest = index;
      }
    }
    return cheapest;
  }
}
