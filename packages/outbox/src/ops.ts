/**
 * `@outbox-inbox/outbox/ops`: what an operator runs beside the pipeline: metrics and the stall
 * watch behind `/health/ready`, consumer lag, retention, replay, the outbox's status, and the
 * triage of failed outbox rows, dead inbox rows and parked messages.
 */
export { createOutboxMetrics } from './operations/metrics.ts';
export type { OutboxMetrics, OutboxMetricsOptions } from './operations/metrics.ts';
export { StallWatch, DEFAULT_STALL_AFTER_MS } from './operations/stall-watch.ts';
export type {
  ProgressReporter,
  WorkerHealth,
  StallWatchOptions,
} from './operations/stall-watch.ts';
export { ConsumerLag } from './operations/consumer-lag.ts';
export type { ConsumerLagOptions, PartitionLag } from './operations/consumer-lag.ts';
export { replayOutbox } from './operations/replay.ts';
export type { ReplaySelection } from './operations/replay.ts';
export { runRetention, previewRetention } from './operations/retention.ts';
export type {
  RetentionOptions,
  RetentionResult,
  RetentionTable,
  RetentionWindow,
} from './operations/retention.ts';
export { runRetentionExclusively } from './operations/retention-lock.ts';
export { createRetentionMetrics } from './operations/retention-metrics.ts';
export type { RetentionMetrics } from './operations/retention-metrics.ts';
export { startRetentionJob } from './operations/start-retention-job.ts';
export type { RetentionJobDeps } from './operations/start-retention-job.ts';
export { readOutboxStatus } from './operations/status.ts';
export type { TableStatus } from './operations/status.ts';
export {
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from './operations/failed-events.ts';
export type { FailedOutboxEvent } from './operations/failed-events.ts';
export {
  requeueDeadInboxEvents,
  discardDeadInboxEvents,
  listDeadInboxEvents,
} from './inbox/dead-rows.ts';
export type { DeadInboxEvent } from './inbox/dead-rows.ts';
export { readParkedMessages } from './kafka/read-parked-messages.ts';
export type { ParkedMessage } from './kafka/read-parked-messages.ts';
export { requeueParkedMessages, discardParkedMessages } from './kafka/parked-operations.ts';
// A bulk load that writes outbox rows by SQL wakes the relays with a NOTIFY on this channel.
export { OUTBOX_CHANNEL } from './outbox/channels.ts';
