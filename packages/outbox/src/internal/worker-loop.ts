import { backoffDelay, type BackoffOptions } from './backoff.ts';
import type { StateLog } from './state-log.ts';
import { Wakeup } from './wakeup.ts';

/** What one step of a worker found, and so what its loop does next. */
export type StepOutcome =
  /** There is more to do now (a full batch): the next step at once. */
  | { readonly next: 'step' }
  /**
   * Caught up: wait for a wake-up (a NOTIFY) or the poll, after `lingerMs` first (commits
   * gather into the next batch).
   */
  | { readonly next: 'wait'; readonly lingerMs?: number }
  /** A watch: look again after the loop's interval; wake-ups do not shorten it. */
  | { readonly next: 'rest' }
  /** A failure the step answered itself (Kafka refused, a send interrupted): back off. */
  | { readonly next: 'back-off'; readonly error: unknown };

export interface WorkerLoopSpec {
  /** What the state log calls the loop's work: `outbox relay`, `CDC slot watch`. */
  readonly what: string;
  readonly state: StateLog;
  readonly step: () => Promise<StepOutcome>;
  /** After every failure, thrown or answered, before the back-off: metrics, probes. */
  readonly failed?: (error: unknown) => void;
  readonly backoff: BackoffOptions;
  /** The poll interval of `wait` (unless the loops poll as one), the interval of `rest`. */
  readonly intervalMs: number;
  /** When the loop ends (the worker stops): what it holds goes. */
  readonly ended?: () => Promise<void>;
}

/**
 * The loops of one worker (the relay's lanes, the processor's workers, the CDC relay's two
 * watches): each steps, logs its state once per change, backs off after a failure and waits
 * when caught up, until `stop()`. A stop ends every wait at once and lets each step in flight
 * finish: a batch commits or rolls back, never stops halfway.
 */
export class WorkerLoops {
  readonly #work = new Wakeup();
  readonly #stopping = new Wakeup();
  readonly #loops: Promise<void>[] = [];
  readonly #sharedPoll: ReturnType<typeof setInterval> | undefined;
  #running = true;

  /**
   * `pollOneEveryMs`: the loops take the same work (the processor's workers), so one poll per
   * interval is enough: it steps the loop that has waited longest, and a step that leaves work
   * behind wakes the next. Without it each loop polls on its own interval. An idle worker of
   * sixteen loops then sends one claim per interval, not sixteen.
   */
  constructor(options: { readonly pollOneEveryMs?: number } = {}) {
    const every = options.pollOneEveryMs;
    this.#sharedPoll =
      every === undefined ? undefined : setInterval(() => this.#work.wakeOne(), every).unref();
  }

  /** New work (a NOTIFY): every waiting loop steps. */
  wake(): void {
    this.#work.wake();
  }

  /** New work for one loop: the one that has waited longest steps. */
  wakeOne(): void {
    this.#work.wakeOne();
  }

  start(spec: WorkerLoopSpec): void {
    this.#loops.push(this.#run(spec));
  }

  async stop(): Promise<void> {
    clearInterval(this.#sharedPoll);
    this.#running = false;
    this.#work.wake();
    this.#stopping.wake();
    await Promise.all(this.#loops);
  }

  async #run(spec: WorkerLoopSpec): Promise<void> {
    try {
      while (this.#running) {
        const outcome = await spec
          .step()
          .catch((error: unknown): StepOutcome => ({ next: 'back-off', error }));
        if (outcome.next === 'back-off') {
          spec.state.failed(spec.what, outcome.error);
          spec.failed?.(outcome.error);
          await this.#rest(backoffDelay(spec.backoff, spec.state.failures));
          continue;
        }
        spec.state.ok(spec.what);
        if (outcome.next === 'step') continue;
        if (outcome.next === 'rest') {
          await this.#rest(spec.intervalMs);
          continue;
        }
        if (outcome.lingerMs !== undefined && outcome.lingerMs > 0)
          await this.#rest(outcome.lingerMs);
        // A wake-up that came while the step ran is remembered: this wait returns at once.
        if (this.#running)
          await this.#work.wait(this.#sharedPoll === undefined ? spec.intervalMs : undefined);
      }
    } finally {
      await spec.ended?.();
    }
  }

  /** Waits `ms`, or less when the worker stops. */
  #rest(ms: number): Promise<void> {
    return this.#running ? this.#stopping.wait(ms) : Promise.resolve();
  }
}
