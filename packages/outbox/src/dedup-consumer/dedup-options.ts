import type { BackoffOptions } from '../internal/backoff.ts';
import type { EventValidator } from '../receive/received-event.ts';

/** Moments of the dedup consumer's unit of work a caller can act at; none in a deployment. */
export interface DedupConsumerHooks {
  /**
   * The event's effect and its `processed_event` row are committed (with the rest of its set)
   * and the batch's offset is NOT: a crash here re-delivers the event, and `processed_event`
   * must drop it. Called for each applied event of a set, in offset order, after its commit.
   */
  readonly afterApply?: (event: {
    readonly eventId: string;
    readonly eventType: string;
  }) => void | Promise<void>;
}

export interface DedupConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Name under which `processed_event` rows are written (one service may have several). */
  readonly consumerName: string;
  readonly validate?: EventValidator;
  readonly fromBeginning?: boolean;
  /**
   * kafkajs session timeout (default 10000): how long a member that died without leaving holds
   * its partitions. Batches heartbeat while they work, every tenth of it.
   */
  readonly sessionTimeoutMs?: number;
  /**
   * How long a rebalance waits for the members to rejoin (default 60000); a member of the
   * @platformatic/kafka adapter still owning nothing this long after one began restarts.
   */
  readonly rebalanceTimeoutMs?: number;
  /** Longest a fetch waits for data (default 1000): bounds stop() and idle latency. */
  readonly maxWaitTimeMs?: number;
  /**
   * Handler failures (with PostgreSQL reachable) before the message is parked and the
   * partition moves on. Failures while PostgreSQL is down are not counted: they retry forever.
   */
  readonly maxAttempts?: number;
  readonly backoff?: Partial<BackoffOptions>;
  /**
   * Partitions whose batches are applied at the same time (default 3), each batch in its own
   * transaction on a pooled connection; one partition's messages stay in order. One partition
   * at a time, every batch waited for the commit (a WAL flush) of another partition's before it.
   */
  readonly partitionsConsumedConcurrently?: number;
}
