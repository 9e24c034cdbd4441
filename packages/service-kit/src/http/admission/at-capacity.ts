import { HttpError } from '../http-error.ts';

/** Why a request was refused before it wrote anything. */
export type Refusal = 'wait-exceeded' | 'queue-full' | 'client-gone' | 'start-deadline';

/**
 * A 503 for work the api did not start: nothing was written, and the client may retry after
 * `retryAfterSeconds` (the error handler sends it as `Retry-After`).
 */
export class AtCapacity extends HttpError {
  readonly reason: Refusal;
  readonly retryAfterSeconds: number;

  constructor(reason: Refusal, retryAfterSeconds: number) {
    super(
      503,
      'AT_CAPACITY',
      `the service is at capacity and did not start this request; nothing was written. Retry after ${retryAfterSeconds} s`,
    );
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * When an admitted request's work must have begun. The admission bounds the wait for a slot;
 * a handler that queues again behind other work (the order api's group commit) holds its
 * requests to the same bound, counted from arrival, so a request is either started within the
 * admission wait or refused, whichever queue it waited in.
 */
export interface StartDeadline {
  /** `performance.now()` by which the work must start. */
  readonly at: number;
  /** The refusal to answer with once `at` has passed and nothing was written. */
  refuse(): AtCapacity;
}
