import type { Refusal } from './at-capacity.ts';

/** How many requests may use the database at once, and how long one may wait for its turn. */
export interface AdmissionOptions {
  /**
   * Requests running their handler at once. Each holds at most one database connection, so
   * the api's pool size is the natural value: more would only queue inside the pool, where a
   * wait cannot be refused cleanly.
   */
  readonly maxInFlight: number;
  /**
   * Longest a request waits for a free slot before it is refused with 503. Together with the
   * handler's own time this bounds the answer: a request is answered or refused soon, never
   * held while its client gives up.
   */
  readonly maxWaitMs: number;
  /**
   * Requests waiting for a slot at once, at most (default `maxInFlight`): one more is refused at
   * once. A queue longer than the slots turn over within the wait ends only in refusals, each
   * one late; refused now, the client has its `Retry-After` in a millisecond, and a client that
   * reaches the api through a pool of connections gets them back for work that fits.
   */
  readonly maxWaiting?: number;
  /** The `Retry-After` of a refusal, seconds. */
  readonly retryAfterSeconds: number;
  /**
   * The answer bound, from arrival (default {@link defaultAnswerWithinMs}): a handler that can
   * still roll its work back near it refuses instead of answering late (`deadlinesOf`).
   */
  readonly answerWithinMs?: number;
}

export const defaultAnswerWithinMs = 1000;

export const defaultAdmission: AdmissionOptions = Object.freeze({
  maxInFlight: 10,
  maxWaitMs: 300,
  retryAfterSeconds: 1,
});

interface Waiter {
  readonly admit: () => void;
  readonly refuse: (reason: Refusal) => void;
}

/**
 * A counting semaphore with a FIFO queue whose waits and length are bounded: the api's
 * admission. A request that cannot start within `maxWaitMs`, or finds `maxWaiting` requests
 * already waiting, is refused instead of queued, so under any offered rate the queue holds at
 * most `maxWaitMs` of work, and the work done is the work that fits (goodput does not collapse
 * into timeouts).
 */
export class RequestAdmission {
  readonly #options: AdmissionOptions;
  readonly #queue = new Set<Waiter>();
  readonly #maxWaiting: number;
  #inFlight = 0;

  constructor(options: AdmissionOptions) {
    if (!(options.maxInFlight >= 1)) throw new RangeError('maxInFlight must be at least 1');
    if (!(options.maxWaitMs >= 0)) throw new RangeError('maxWaitMs must be 0 or more');
    if (!((options.maxWaiting ?? 0) >= 0)) throw new RangeError('maxWaiting must be 0 or more');
    if (options.answerWithinMs !== undefined && !(options.answerWithinMs > options.maxWaitMs)) {
      throw new RangeError('answerWithinMs must be longer than maxWaitMs');
    }
    this.#options = Object.freeze({ ...options });
    this.#maxWaiting = options.maxWaiting ?? options.maxInFlight;
  }

  get options(): AdmissionOptions {
    return this.#options;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get waiting(): number {
    return this.#queue.size;
  }

  /**
   * Resolves once the request may run (then call the returned `release` exactly once), or
   * rejects with a {@link Refusal}: its wait ran out, or `gone` fired (the client left).
   * `waitedMs` is what the request already waited before it got here.
   */
  acquire(options: { waitedMs: number; gone: AbortSignal }): Promise<() => void> {
    if (options.gone.aborted) return Promise.reject<() => void>('client-gone' satisfies Refusal);
    if (this.#inFlight < this.#options.maxInFlight && this.#queue.size === 0) {
      this.#inFlight += 1;
      return Promise.resolve(this.#releaser());
    }
    const budgetMs = this.#options.maxWaitMs - options.waitedMs;
    if (budgetMs <= 0) return Promise.reject<() => void>('wait-exceeded' satisfies Refusal);
    if (this.#queue.size >= this.#maxWaiting)
      return Promise.reject<() => void>('queue-full' satisfies Refusal);
    return new Promise((resolve, reject) => {
      const leave = (): void => {
        clearTimeout(timer);
        options.gone.removeEventListener('abort', onGone);
        this.#queue.delete(waiter);
      };
      const waiter: Waiter = {
        admit: () => {
          leave();
          resolve(this.#releaser());
        },
        refuse: (reason) => {
          leave();
          reject(reason);
        },
      };
      const onGone = (): void => waiter.refuse('client-gone');
      const timer = setTimeout(() => waiter.refuse('wait-exceeded'), budgetMs);
      options.gone.addEventListener('abort', onGone, { once: true });
      this.#queue.add(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the oldest waiter, so a newcomer cannot overtake it.
      const next = this.#queue.values().next();
      if (next.done) this.#inFlight -= 1;
      else next.value.admit();
    };
  }
}
