import type { BackoffOptions } from '../internal/backoff.ts';
import type { EventValidator } from '../receive/received-event.ts';

/** One Kafka batch the inbox writer is storing. */
export interface InboxBatchInfo {
  readonly topic: string;
  readonly partition: number;
  readonly eventIds: readonly string[];
}

/**
 * Moments of the inbox writer's unit of work a caller can act at; a deployment passes none.
 * The e2e suite kills the process there.
 */
export interface InboxWriterHooks {
  /** Before the batch's rows are stored: nothing of it is durable, its offset not committed. */
  readonly beforeStore?: (batch: InboxBatchInfo) => void | Promise<void>;
  /** The rows are committed and the offset is NOT: a crash here re-delivers the batch. */
  readonly beforeCommitOffset?: (batch: InboxBatchInfo) => void | Promise<void>;
}

export interface InboxWriterOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Returns a reason to park a well-formed event (unknown type, failing its schema...). */
  readonly validate?: EventValidator;
  /** Where a new consumer group starts; default true, so nothing enqueued earlier is skipped. */
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
  /** Pacing of reconnects after a crash or a failed batch. */
  readonly backoff?: Partial<BackoffOptions>;
  /**
   * Partitions whose batches are stored at the same time (default 3), each on its own pooled
   * connection; one partition's batches stay in order. Overlapping one batch's INSERT with
   * another's fetch and offset commit raises ingest; the measurements are in
   * docs/benchmarks.md ("Measurements behind settings in the code").
   */
  readonly partitionsConsumedConcurrently?: number;
}
