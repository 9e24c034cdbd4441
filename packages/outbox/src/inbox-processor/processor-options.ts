import { OutboxError } from '../errors.ts';
import type { BackoffOptions } from '../internal/backoff.ts';
import type { InboxEvent } from './inbox-event.ts';

/** One inbox row the processor is handling. */
export interface InboxRowInfo {
  readonly eventId: string;
  readonly eventType: string;
  readonly partitionKey: string;
}

/** Moments of the inbox processor's unit of work a caller can act at; none in a deployment. */
export interface InboxProcessorHooks {
  /**
   * Called in each attempt just before the handler (a calling handler's `call`), inside its
   * timeout: a throw fails the attempt, a promise that does not settle makes a handler that
   * hangs. Fault-injection point of the e2e suite.
   */
  readonly beforeHandler?: (event: InboxEvent) => void | Promise<void>;
  /**
   * The handler ran in the row's transaction and the `processed` mark is not written yet: a
   * crash here rolls both back, and the row is handled again once its lease ends.
   */
  readonly beforeMarkProcessed?: (row: InboxRowInfo) => void | Promise<void>;
}

export interface InboxProcessorOptions {
  /**
   * Workers, each handling one claim at a time (never two rows of one key at once). A worker
   * holds at most one pooled connection at a time (a second one for a moment to cancel a hung
   * handler's query) and none during a calling handler's `call`, so concurrency may exceed the
   * pool: the extra workers wait for a connection, and a wait past the pool's timeout costs no
   * attempt (see startInboxProcessor). Size the pool for the workers that write at once.
   */
  readonly concurrency: number;
  /**
   * Heads of keys one worker claims at once (default 16) and handles in one transaction, each
   * row in a savepoint of its own: its effect and `processed` mark commit together, and the
   * claim commits once instead of once per row. A row tried before is always claimed alone.
   * PostgreSQL keeps up to 64 subtransactions per transaction in shared memory; more would
   * slow every snapshot, so the most is 64.
   */
  readonly batchSize: number;
  readonly pollIntervalMs: number;
  /** LISTEN for the writer's NOTIFY; needs `deps.listen`. */
  readonly notify: boolean;
  /** Attempts before a row is marked dead. */
  readonly maxAttempts: number;
  /** Delay before the next attempt of a failed row. */
  readonly retryBackoff: BackoffOptions;
  /** Pacing of the worker loop itself when PostgreSQL is unreachable. */
  readonly backoff: BackoffOptions;
  /**
   * Longest a handler may run (default 20000). A slower one fails its attempt: its
   * transaction is rolled back (a query it has running is cancelled) and the attempt counts.
   * It also is the lease: a row whose process died is claimed again after this long.
   * Must be below `statementTimeoutMs`.
   */
  readonly handlerTimeoutMs: number;
  /**
   * `statement_timeout` and `idle_in_transaction_session_timeout` of the handler's transaction:
   * the backstop that frees the row if the whole process freezes.
   */
  readonly statementTimeoutMs: number;
}

export const DEFAULT_INBOX_PROCESSOR_OPTIONS: InboxProcessorOptions = Object.freeze({
  concurrency: 1,
  batchSize: 16,
  pollIntervalMs: 1000,
  notify: true,
  maxAttempts: 5,
  retryBackoff: Object.freeze({ initialMs: 500, maxMs: 60_000, multiplier: 2 }),
  backoff: Object.freeze({ initialMs: 100, maxMs: 10_000, multiplier: 2 }),
  handlerTimeoutMs: 20_000,
  statementTimeoutMs: 30_000,
});

/** Applies defaults once and checks the values and the timeouts' order. */
export function resolveInboxProcessorOptions(
  options: Partial<InboxProcessorOptions> = {},
): InboxProcessorOptions {
  const resolved: InboxProcessorOptions = Object.freeze({
    ...DEFAULT_INBOX_PROCESSOR_OPTIONS,
    ...options,
    retryBackoff: Object.freeze({
      ...DEFAULT_INBOX_PROCESSOR_OPTIONS.retryBackoff,
      ...options.retryBackoff,
    }),
    backoff: Object.freeze({ ...DEFAULT_INBOX_PROCESSOR_OPTIONS.backoff, ...options.backoff }),
  });
  for (const name of ['concurrency', 'batchSize', 'maxAttempts', 'handlerTimeoutMs'] as const) {
    if (!(Number.isInteger(resolved[name]) && resolved[name] >= 1)) {
      throw new OutboxError(
        'INVALID_OPTIONS',
        `${name} must be a whole number of at least 1 (got ${resolved[name]})`,
      );
    }
  }
  if (resolved.batchSize > 64) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `batchSize must be at most 64, PostgreSQL's cached subtransactions per transaction (got ${resolved.batchSize})`,
    );
  }
  if (!(resolved.handlerTimeoutMs < resolved.statementTimeoutMs)) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `handlerTimeoutMs (${resolved.handlerTimeoutMs}) must be below statementTimeoutMs (${resolved.statementTimeoutMs}), which also ends a handler's idle transaction`,
    );
  }
  return resolved;
}
