import { HttpError } from '../http-error.ts';

/** Why a request was refused before it wrote anything. */
export type Refusal =
  'wait-exceeded' | 'queue-full' | 'client-gone' | 'start-deadline' | 'answer-deadline';

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
      `the service is at capacity and ${reason === 'answer-deadline' ? 'could not finish this request in time' : 'did not start this request'}; nothing was written. Retry after ${retryAfterSeconds} s`,
    );
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The bounds of an admitted request, both counted from its arrival. The admission bounds the
 * wait for a slot; a handler that queues again behind other work (the order api's group commit)
 * holds its requests to the same start bound, so a request is either started within the
 * admission wait or refused, whichever queue it waited in. A handler whose work can still be
 * rolled back refuses it, rather than answer late, once the answer bound is near.
 */
export interface RequestDeadlines {
  /** `performance.now()` by which the work must start. */
  readonly startBy: number;
  /** `performance.now()` by which the answer must be sent: the api's answer bound. */
  readonly answerBy: number;
  /** The refusal to answer with once a deadline has passed and nothing was written. */
  refuse(reason: 'start-deadline' | 'answer-deadline'): AtCapacity;
}
