import { OutboxError } from '../errors.ts';
import type { BackoffOptions } from '../internal/backoff.ts';
import { KAFKA_DEFAULT_MAX_RECORD_BYTES } from '../enqueue/kafka-limits.ts';

/** One event of a batch the relay just had acknowledged by Kafka. */
export interface RelayBatchEvent {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly topic: string;
  readonly partitionKey: string;
}

export interface RelayHooks {
  /**
   * Called after Kafka acknowledged the batch and BEFORE `published_at` is committed. A throw
   * rolls the batch back (it is sent again: a duplicate). Fault-injection point of the e2e suite.
   */
  readonly afterPublish?: (batch: readonly RelayBatchEvent[]) => void | Promise<void>;
}

export interface RelayOptions {
  /** Most events claimed, sent (one `sendBatch`) and marked in one transaction. */
  readonly batchSize: number;
  /**
   * Claim-send-mark loops in this relay, each with its own producer and, during a batch, its
   * own pooled connection (default 1). They act like separate relays: per-key order holds,
   * and one lane's database work overlaps another's wait for Kafka. On a small machine the
   * gain is slight and stops at two (the lanes' claims contend for the same keys and cores),
   * and more lanes mean more, smaller batches under light load, hence one by default. The
   * measurements are in docs/benchmarks.md ("Measurements behind settings in the code").
   */
  readonly lanes: number;
  /**
   * Most bytes (Kafka records, as the relay estimates them) in one batch; the claim stops
   * adding rows before the next one would pass it, but always takes one. kafkajs writes the
   * messages of one send that share a partition as ONE record batch, and the broker refuses a
   * record batch above the topic's `max.message.bytes`: the whole batch may go to one
   * partition, so the default is that limit's default (1 MiB) less the batch header.
   */
  readonly maxBatchBytes: number;
  /**
   * Largest record the relay sends; a larger row is set aside (FAILED, EVENT_TOO_LARGE) without
   * being sent. At most `maxBatchBytes` (and by default equal to it).
   */
  readonly maxEventBytes: number;
  /**
   * Tries before a row Kafka keeps refusing with an error that may pass (unknown topic, ...)
   * is set aside; errors that cannot pass (record too large, invalid topic or record) set it
   * aside at once. Kafka or PostgreSQL being down never counts.
   */
  readonly maxPublishAttempts: number;
  /**
   * Whether the relay's metadata requests may create a missing topic (when the broker has
   * `auto.create.topics.enable`). With false, a row for a missing topic is retried, then set
   * aside after `maxPublishAttempts`.
   */
  readonly allowAutoTopicCreation: boolean;
  /** How many of the oldest unpublished rows a claim examines to find partition-key heads. */
  readonly scanWindow: number;
  /** Fallback poll when no NOTIFY arrives (or LISTEN is off / down). */
  readonly pollIntervalMs: number;
  /**
   * After a batch that was not full, a lane waits this long before it waits for the next
   * NOTIFY, so a steady stream is published in batches instead of one claim per commit
   * (Kafka's `linger.ms`, for the claim). A full batch is followed at once: that is a backlog.
   */
  readonly lingerMs: number;
  /** LISTEN for the NOTIFY that `enqueue` issues at commit; needs `deps.listen`. */
  readonly notify: boolean;
  /**
   * A row held back by the commit-order fence longer than this (an outbox writer transaction
   * left open) makes the relay stalled in `/health/ready` and `outbox_worker_stalled`.
   */
  readonly fenceStallMs: number;
  /** `lock_timeout` of the claiming transaction. */
  readonly lockTimeoutMs: number;
  /** `statement_timeout` of the claiming transaction. */
  readonly statementTimeoutMs: number;
  /** `idle_in_transaction_session_timeout`: frees the row locks if this relay hangs mid-send. */
  readonly idleInTransactionTimeoutMs: number;
  /** The relay gives up waiting for Kafka's ack after this; must be below the two above. */
  readonly sendTimeoutMs: number;
  /** Retry pacing after a failed batch (Kafka or PostgreSQL down). */
  readonly backoff: BackoffOptions;
  /** kafkajs client id of the relay's producer. */
  readonly clientId: string;
  readonly hooks: RelayHooks;
}

export const DEFAULT_RELAY_OPTIONS: RelayOptions = Object.freeze({
  batchSize: 500,
  maxBatchBytes: KAFKA_DEFAULT_MAX_RECORD_BYTES,
  maxEventBytes: KAFKA_DEFAULT_MAX_RECORD_BYTES,
  maxPublishAttempts: 5,
  allowAutoTopicCreation: true,
  lanes: 1,
  scanWindow: 2000,
  pollIntervalMs: 1000,
  lingerMs: 10,
  notify: true,
  fenceStallMs: 30_000,
  lockTimeoutMs: 2000,
  statementTimeoutMs: 15_000,
  idleInTransactionTimeoutMs: 15_000,
  sendTimeoutMs: 10_000,
  backoff: Object.freeze({ initialMs: 100, maxMs: 10_000, multiplier: 2 }),
  clientId: 'outbox-relay',
  hooks: Object.freeze({}),
});

/** Applies defaults once and checks the sizes and the timeouts' order. */
export function resolveRelayOptions(options: Partial<RelayOptions> = {}): RelayOptions {
  const resolved: RelayOptions = Object.freeze({
    ...DEFAULT_RELAY_OPTIONS,
    ...options,
    // A lower batch cap lowers the event limit with it, unless the event limit is given.
    maxEventBytes:
      options.maxEventBytes ??
      Math.min(DEFAULT_RELAY_OPTIONS.maxEventBytes, options.maxBatchBytes ?? Infinity),
    backoff: Object.freeze({ ...DEFAULT_RELAY_OPTIONS.backoff, ...options.backoff }),
    hooks: Object.freeze({ ...options.hooks }),
  });
  if (!(resolved.batchSize >= 1)) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `batchSize must be at least 1 (got ${resolved.batchSize})`,
    );
  }
  for (const name of [
    'maxBatchBytes',
    'maxEventBytes',
    'maxPublishAttempts',
    'fenceStallMs',
  ] as const) {
    if (!Number.isInteger(resolved[name]) || resolved[name] < 1) {
      throw new OutboxError(
        'INVALID_OPTIONS',
        `${name} must be a positive integer (got ${resolved[name]})`,
      );
    }
  }
  if (resolved.maxEventBytes > resolved.maxBatchBytes) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `maxEventBytes (${resolved.maxEventBytes}) must not exceed maxBatchBytes (${resolved.maxBatchBytes}): a row that passes the first must fit a batch of its own`,
    );
  }
  if (
    resolved.sendTimeoutMs >=
    Math.min(resolved.statementTimeoutMs, resolved.idleInTransactionTimeoutMs)
  ) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `sendTimeoutMs (${resolved.sendTimeoutMs}) must be below statementTimeoutMs and idleInTransactionTimeoutMs`,
    );
  }
  return resolved;
}
