/**
 * `@outbox-inbox/outbox/ops`: what an operator runs beside the pipeline: metrics and the stall
 * watch behind `/health/ready`, consumer lag, retention, replay, the outbox's status, and the
 * triage of failed outbox rows, dead inbox rows and parked messages.
 */
export { createOutboxMetrics } from './metrics.ts';
export type { OutboxMetrics, OutboxMetricsOptions } from './metrics.ts';
export { StallWatch, DEFAULT_STALL_AFTER_MS } from './stall-watch.ts';
export type { ProgressReporter, WorkerHealth, StallWatchOptions } from './stall-watch.ts';
export { ConsumerLag } from './consumer-lag.ts';
export type { ConsumerLagOptions, PartitionLag } from './consumer-lag.ts';
export { replayOutbox } from './replay.ts';
export type { ReplaySelection } from './replay.ts';
export { runRetention, previewRetention } from './retention.ts';
export type {
  RetentionOptions,
  RetentionResult,
  RetentionTable,
  RetentionWindow,
} from './retention.ts';
export { runRetentionExclusively } from './retention-lock.ts';
export { createRetentionMetrics } from './retention-metrics.ts';
export type { RetentionMetrics } from './retention-metrics.ts';
export { startRetentionJob } from './start-retention-job.ts';
export type { RetentionJobDeps } from './start-retention-job.ts';
export { readOutboxStatus } from './status.ts';
export type { TableStatus } from './status.ts';
export {
  listFailedOutboxEvents,
  retryFailedOutboxEvents,
  skipFailedOutboxEvents,
} from './failed-events.ts';
export type { FailedOutboxEvent } from './failed-events.ts';
export {
  requeueDeadInboxEvents,
  discardDeadInboxEvents,
  listDeadInboxEvents,
} from '../inbox/dead-rows.ts';
export type { DeadInboxEvent } from '../inbox/dead-rows.ts';
export { readParkedMessages } from '../kafka/read-parked-messages.ts';
export type { ParkedMessage } from '../kafka/read-parked-messages.ts';
export { requeueParkedMessages, discardParkedMessages } from '../kafka/parked-operations.ts';
// A bulk load that writes outbox rows by SQL wakes the relays with a NOTIFY on this channel.
export { OUTBOX_CHANNEL } from '../outbox/channels.ts';
