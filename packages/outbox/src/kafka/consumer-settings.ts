import type { BackoffOptions } from '../internal/backoff.ts';

/**
 * Default session timeout: how long a member that died without leaving (SIGKILL, a lost host)
 * keeps its partitions. Short, because every adapter heartbeats while a batch is being
 * handled; kafkajs's default is 30 s.
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

/** Default longest wait of a fetch for new messages. */
export const DEFAULT_MAX_WAIT_TIME_MS = 1000;

export const DEFAULT_CONSUMER_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 200,
  maxMs: 10_000,
  multiplier: 2,
});
