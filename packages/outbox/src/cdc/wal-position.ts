/** A WAL position (`pg_lsn`, written `16/B374D848`) as a number of bytes from the start. */
export function lsnBytes(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  if (high === undefined || low === undefined) throw new Error(`not a WAL position: ${lsn}`);
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * How far behind in time a replication slot is: when did the server's WAL last stand where the
 * slot has confirmed? PostgreSQL knows a logical slot's lag in bytes only, so the watch samples
 * the server's current position now and then and keeps the samples the slot has not passed.
 */
export class WalTimeline {
  readonly #samples: { readonly at: number; readonly position: bigint }[] = [];

  /** Notes where the server's WAL stands at `at` (ms). */
  sample(at: number, position: bigint): void {
    this.#samples.push({ at, position });
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
}
