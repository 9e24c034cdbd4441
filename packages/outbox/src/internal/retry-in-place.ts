import { backoffDelay, type BackoffOptions } from './backoff.ts';
import type { StateLog } from './state-log.ts';

export class Abandoned extends Error {
  constructor() {
    super('abandoned: the consumer is stopping or lost its partitions');
    this.name = 'Abandoned';
  }
}

/**
 * Retries `work` until it succeeds, with capped jittered backoff, while `keepGoing()` holds
 * (the consumer still owns the partition): a database outage stalls the partition instead
 * of skipping messages. `beat` keeps the group session alive between attempts.
 */
export async function retryInPlace<T>(
  work: () => Promise<T>,
  options: {
    readonly backoff: BackoffOptions;
    readonly state: StateLog;
    readonly what: string;
    readonly keepGoing: () => boolean;
    readonly beat: () => Promise<void>;
  },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (!options.keepGoing()) throw new Abandoned();
    try {
      const result = await work();
      options.state.ok(options.what);
      return result;
    } catch (error) {
      options.state.failed(options.what, error);
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(options.backoff, attempt)));
      await options.beat().catch(() => undefined);
    }
  }
}
