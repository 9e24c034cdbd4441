import type { BackoffOptions } from '../internal/backoff.ts';
import type { EventValidator } from '../kafka/received-event.ts';

export interface InboxWriterOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Returns a reason to park a well-formed event (unknown type, failing its schema...). */
  readonly validate?: EventValidator;
  /** Where a new consumer group starts; default true, so nothing enqueued earlier is skipped. */
  readonly fromBeginning?: boolean;
  /** kafkajs session timeout (default 30000): how long a dead member holds its partitions. */
  readonly sessionTimeoutMs?: number;
  /** Longest a fetch waits for data (default 1000): bounds stop() and idle latency. */
  readonly maxWaitTimeMs?: number;
  /** Pacing of reconnects after a crash or a failed batch. */
  readonly backoff?: Partial<BackoffOptions>;
  /**
   * Partitions whose batches are stored at the same time (default 3), each on its own pooled
   * connection; one partition's batches stay in order. Overlapping one batch's INSERT with
   * another's fetch and offset commit took ingest from ~37k to ~48k messages/s in B5.
   */
  readonly partitionsConsumedConcurrently?: number;
}

export interface InboxProcessorOptions {
  /** Rows handled at once (each in its own transaction, never two of one key). */
  readonly concurrency: number;
  readonly pollIntervalMs: number;
  /** LISTEN for the writer's NOTIFY; needs `deps.listen`. */
  readonly notify: boolean;
  /** Attempts before a row is marked dead. */
  readonly maxAttempts: number;
  /** Delay before the next attempt of a failed row. */
  readonly retryBackoff: BackoffOptions;
  /** Pacing of the worker loop itself when PostgreSQL is unreachable. */
  readonly backoff: BackoffOptions;
  /** `statement_timeout` for the handler's transaction. */
  readonly statementTimeoutMs: number;
}

export const DEFAULT_INBOX_PROCESSOR_OPTIONS: InboxProcessorOptions = Object.freeze({
  concurrency: 1,
  pollIntervalMs: 1000,
  notify: true,
  maxAttempts: 5,
  retryBackoff: Object.freeze({ initialMs: 500, maxMs: 60_000, multiplier: 2 }),
  backoff: Object.freeze({ initialMs: 100, maxMs: 10_000, multiplier: 2 }),
  statementTimeoutMs: 30_000,
});

export function resolveInboxProcessorOptions(
  options: Partial<InboxProcessorOptions> = {},
): InboxProcessorOptions {
  return Object.freeze({
    ...DEFAULT_INBOX_PROCESSOR_OPTIONS,
    ...options,
    retryBackoff: Object.freeze({
      ...DEFAULT_INBOX_PROCESSOR_OPTIONS.retryBackoff,
      ...options.retryBackoff,
    }),
    backoff: Object.freeze({ ...DEFAULT_INBOX_PROCESSOR_OPTIONS.backoff, ...options.backoff }),
  });
}
