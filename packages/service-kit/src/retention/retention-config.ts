import { ConfigError, type EnvReader } from '../config/env-reader.ts';

const DAY_SECONDS = 86_400;

/** How the retention role runs, and how long each library table keeps its finished rows. */
export interface RetentionConfig {
  /** Time between two runs. */
  readonly intervalMs: number;
  /** Rows per DELETE: each batch is its own short transaction. */
  readonly batchSize: number;
  /** Published outbox rows: the replay window. */
  readonly outboxWindowMs: number;
  /** `processed_event` dedup rows: longer than any redelivery can arrive. */
  readonly processedEventWindowMs: number;
  /** Processed inbox rows: the inbox's dedup window, never shorter than `processedEventWindowMs`. */
  readonly inboxWindowMs: number;
  /** Parked messages: how long an operator has to look at them. */
  readonly parkedWindowMs: number;
}

/**
 * Reads the RETENTION_* settings (whole seconds, so a test may use short ones). A processed
 * inbox row is the inbox's only memory of an event id, so its window shorter than the
 * `processed_event` one would let a redelivery that the dedup table still refuses be stored
 * and handled again: refused here, naming the variable, before the role starts.
 */
export function readRetentionConfig(read: EnvReader): RetentionConfig {
  const seconds = (name: string, fallback: number): number =>
    read.integer(name, { default: fallback, min: 1, max: 3650 * DAY_SECONDS });
  const processedEvent = seconds('RETENTION_PROCESSED_EVENT_WINDOW_SECONDS', 30 * DAY_SECONDS);
  const inbox = seconds('RETENTION_INBOX_WINDOW_SECONDS', processedEvent);
  if (inbox < processedEvent) {
    throw new ConfigError(
      'RETENTION_INBOX_WINDOW_SECONDS',
      `must be at least RETENTION_PROCESSED_EVENT_WINDOW_SECONDS (${processedEvent}), the dedup ` +
        `window it protects (got "${inbox}"): a redelivered event older than the inbox window ` +
        'would be stored and handled again',
    );
  }
  return Object.freeze({
    intervalMs: 1000 * seconds('RETENTION_INTERVAL_SECONDS', 300),
    batchSize: read.integer('RETENTION_BATCH_SIZE', { default: 1000, min: 1, max: 100_000 }),
    outboxWindowMs: 1000 * seconds('RETENTION_OUTBOX_WINDOW_SECONDS', 7 * DAY_SECONDS),
    processedEventWindowMs: 1000 * processedEvent,
    inboxWindowMs: 1000 * inbox,
    parkedWindowMs: 1000 * seconds('RETENTION_PARKED_WINDOW_SECONDS', 30 * DAY_SECONDS),
  });
}
