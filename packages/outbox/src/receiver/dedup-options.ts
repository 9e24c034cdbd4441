import type { BackoffOptions } from '../internal/backoff.ts';
import type { EventValidator } from '../kafka/received-event.ts';

export interface DedupConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Name under which `processed_event` rows are written (one service may have several). */
  readonly consumerName: string;
  readonly validate?: EventValidator;
  readonly fromBeginning?: boolean;
  /** kafkajs session timeout (default 30000): how long a dead member holds its partitions. */
  readonly sessionTimeoutMs?: number;
  /** Longest a fetch waits for data (default 1000): bounds stop() and idle latency. */
  readonly maxWaitTimeMs?: number;
  /**
   * Handler failures (with PostgreSQL reachable) before the message is parked and the
   * partition moves on. Failures while PostgreSQL is down are not counted: they retry forever.
   */
  readonly maxAttempts?: number;
  readonly backoff?: Partial<BackoffOptions>;
}
