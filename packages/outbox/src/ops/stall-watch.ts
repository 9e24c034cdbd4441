import type { ProgressReporter } from '../worker.ts';
import { describe } from '../internal/state-log.ts';

/** One worker's state, as `/health/ready` and `outbox_worker_stalled` show it. */
export interface WorkerHealth {
  readonly worker: string;
  readonly stalled: boolean;
  /** Why it is stalled: which unit, for how long, the last error. */
  readonly reason?: string;
}

export interface StallWatchOptions {
  /** Work waiting this long without progress is a stall. */
  readonly stallAfterMs: number;
  /** The clock; tests pass their own. */
  readonly now?: () => number;
}

export const DEFAULT_STALL_AFTER_MS = 60_000;

/**
 * Gray failures made visible: a worker that has work and makes no progress (its batch retried
 * in place for ever, Kafka refusing every send, a handler wedged) looks healthy to every other
 * check. Workers report "has work" and "made progress" here; a worker is stalled when one of
 * its units has had work for `stallAfterMs` without progress.
 */
export class StallWatch {
  readonly #stallAfterMs: number;
  readonly #now: () => number;
  readonly #units = new Map<string, Map<string, UnitState>>();

  constructor(options: StallWatchOptions) {
    this.#stallAfterMs = options.stallAfterMs;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The reporter of `worker`'s `unit` (the same one for the same names); the unit is stalled
   * after `stallAfterMs` (the watch's own by default; fixed by the first call).
   */
  reporter(worker: string, unit = '', stallAfterMs = this.#stallAfterMs): ProgressReporter {
    let units = this.#units.get(worker);
    if (units === undefined) this.#units.set(worker, (units = new Map()));
    let state = units.get(unit);
    if (state === undefined) {
      state = new UnitState(this.#now, stallAfterMs);
      units.set(unit, state);
    }
    return state;
  }

  /** Every worker that has reported, stalled or not, by name. */
  workers(): WorkerHealth[] {
    const now = this.#now();
    return [...this.#units].map(([worker, units]) => {
      let worst: { unit: string; state: UnitState; forMs: number } | undefined;
      for (const [unit, state] of units) {
        const forMs = state.workingFor(now);
        if (forMs >= state.stallAfterMs && forMs > (worst?.forMs ?? 0)) {
          worst = { unit, state, forMs };
        }
      }
      if (worst === undefined) return { worker, stalled: false };
      const where = worst.unit === '' ? '' : ` (${worst.unit})`;
      const error =
        worst.state.lastError === undefined ? '' : `; last error: ${worst.state.lastError}`;
      return {
        worker,
        stalled: true,
        reason: `has had work for ${Math.round(worst.forMs / 1000)} s without progress${where}${error}`,
      };
    });
  }
}

class UnitState implements ProgressReporter {
  lastError: string | undefined;
  readonly stallAfterMs: number;
  #working = false;
  #since = 0;
  #probing = false;
  #probedAt = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;
  readonly #probeIntervalMs: number;

  constructor(now: () => number, stallAfterMs: number) {
    this.#now = now;
    this.stallAfterMs = stallAfterMs;
    this.#probeIntervalMs = Math.min(5000, stallAfterMs / 4);
  }

  /** How long work has waited without progress; 0 when there is none. */
  workingFor(now: number): number {
    return this.#working ? now - this.#since : 0;
  }

  hasWork(hasWork: boolean, waitingForMs?: number): void {
    if (hasWork && waitingForMs !== undefined) this.#since = this.#now() - waitingForMs;
    else if (hasWork && !this.#working) this.#since = this.#now();
    this.#working = hasWork;
  }

  progressed(): void {
    this.#since = this.#now();
    this.lastError = undefined;
  }

  failed(error: unknown): void {
    this.lastError = describe(error);
  }

  checkWork(probe: () => Promise<boolean | number>): void {
    const now = this.#now();
    if (this.#probing || now - this.#probedAt < this.#probeIntervalMs) return;
    this.#probing = true;
    this.#probedAt = now;
    probe()
      .then(
        (work) => (typeof work === 'number' ? this.hasWork(work > 0, work) : this.hasWork(work)),
        () => undefined,
      )
      .finally(() => (this.#probing = false));
  }
}
