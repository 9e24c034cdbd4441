/**
 * `@outbox-inbox/outbox/ops`: what an operator runs beside the pipeline: metrics and the stall
 * watch behind `/health/ready`, consumer lag, retention, replay, the outbox's status, and the
 * triage of failed outbox rows, dead inbox rows and parked messages, and the grants each
 * worker's login needs. One statement a module.
 */
export {
  createOutboxMetrics,
  type OutboxMetrics,
  type OutboxMetricsOptions,
} from './ops/metrics.ts';
export {
  StallWatch,
  DEFAULT_STALL_AFTER_MS,
  type WorkerHealth,
  type StallWatchOptions,
} from './ops/stall-watch.ts';
export type { ProgressReporter } from './worker.ts';
export { ConsumerLag, type ConsumerLagOptions, type PartitionLag } from './ops/consumer-lag.ts';
export { replayOutbox, type ReplaySelection } from './ops/replay.ts';
export {
  runRetention,
  previewRetention,
  type RetentionOptions,
  type RetentionResult,
  type RetentionTable,
  type RetentionWindow,
} from './ops/retention.ts';
export { runRetentionExclusively } from './ops/retention-lock.ts';
export { createRetentionMetrics, type RetentionMetrics } from './ops/retention-metrics.ts';
export { startRetentionJob, type RetentionJobDeps } from './ops/start-retention-job.ts';
export { readOutboxStatus, type TableStatus } from './ops/status.ts';
export {
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
  type FailedOutboxEvent,
} from './ops/failed-events.ts';
export {
  requeueDeadInboxEvents,
  discardDeadInboxEvents,
  listDeadInboxEvents,
  type DeadInboxEvent,
} from './inbox-processor/dead-rows.ts';
export { readParkedMessages, type ParkedMessage } from './receive/read-parked-messages.ts';
export { requeueParkedMessages, discardParkedMessages } from './receive/parked-operations.ts';
export {
  grantOutboxAccess,
  outboxGrantStatements,
  type OutboxGrantOptions,
  type OutboxWorkerKind,
} from './schema/grants.ts';
// A bulk load that writes outbox rows by SQL wakes the relays with a NOTIFY on this channel.
export { OUTBOX_CHANNEL } from './enqueue/channels.ts';
