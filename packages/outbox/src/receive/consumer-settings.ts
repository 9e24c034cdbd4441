import type { BackoffOptions } from '../internal/backoff.ts';

/**
 * Default session timeout: how long a member that died without leaving (SIGKILL, a lost host)
 * keeps its partitions. Short, because every adapter heartbeats while a batch is being
 * handled; kafkajs's default is 30 s.
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

/**
 * Default longest wait of a fetch for new messages. With `FETCH_MIN_BYTES` at one byte it adds
 * no latency (a fetch returns as soon as a message is there): it only bounds how long an idle
 * fetch stays open, and so how long stop() waits.
 */
export const DEFAULT_MAX_WAIT_TIME_MS = 1000;

/**
 * Least data a fetch waits for: one byte, so the broker answers as soon as one message is
 * there, and an event at a low rate waits for nobody. Fetches fill under load without a larger
 * value, because a consumer does not fetch a partition again while its batch is being applied:
 * kafkajs sends a broker its next fetch once the batches of the last one are handled, and the
 * platformatic adapter reads its stream's buffer only between batches. So a fetch holds what
 * arrived during the previous batch's transaction, and the busier the consumer the fuller the
 * fetch (a self-clocking batch). A larger value would hold every fetch at a low rate for up to
 * maxWaitTimeMs, the latency this must not add.
 */
export const FETCH_MIN_BYTES = 1;

/**
 * Most bytes of one partition a fetch returns (kafkajs's default): room for hundreds of events,
 * so a backlog is applied in few large batches, while one batch stays small enough to apply
 * well within a session timeout.
 */
export const FETCH_MAX_BYTES_PER_PARTITION = 1_048_576;

export const DEFAULT_CONSUMER_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 200,
  maxMs: 10_000,
  multiplier: 2,
});
