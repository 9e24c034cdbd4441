// Public surface of @outbox-inbox/outbox: everything a service needs, nothing deeper.

// Schema
export type {
  OutboxTables,
  OutboxEventTable,
  InboxEventTable,
  ProcessedEventTable,
  ParkedMessageTable,
} from './schema/tables.ts';
export { outboxMigrations, migrateOutbox, OUTBOX_MIGRATION_TABLE } from './schema/migrations.ts';

// Shared
export type { Logger } from './logger.ts';
export { silentLogger } from './logger.ts';
export { OutboxError } from './errors.ts';
export type { OutboxErrorCode } from './errors.ts';
export type { Worker } from './worker.ts';
export type { BackoffOptions } from './internal/backoff.ts';
export { createPgPool, type PgPoolOptions } from './pg-pool/create-pg-pool.ts';
export type { ListenConfig } from './internal/listener.ts';

// Write side
export { enqueue, enqueueMany } from './outbox/enqueue.ts';
export type { EnqueueOptions } from './outbox/enqueue.ts';
export type { OutboxEventInput } from './outbox/outbox-event-input.ts';
export { uuidv7 } from './outbox/uuid-v7.ts';
export { DEFAULT_MAX_EVENT_BYTES } from './outbox/kafka-limits.ts';
export { OUTBOX_CHANNEL, INBOX_CHANNEL } from './outbox/channels.ts';
export { CommitNotifier, createOutboxNotifier } from './outbox/commit-notifier.ts';

// Relay
export { startRelay } from './relay/start-relay.ts';
export type { RelayDeps } from './relay/start-relay.ts';
export type { RelayOptions, RelayHooks, RelayBatchEvent } from './relay/relay-options.ts';
export { DEFAULT_RELAY_OPTIONS } from './relay/relay-options.ts';
export { OUTBOX_WRITER_LOCK } from './relay/commit-order-fence.ts';
export { toEventRecord } from './relay/event-record.ts';
export type { EventMessageFields, EventRecord } from './relay/event-record.ts';

// The port to Kafka, and its adapters
export type {
  KafkaClient,
  ProducerOptions,
  EventProducer,
  OutgoingRecord,
  OutgoingHeaders,
  RecordOutcome,
  SendReport,
  SendOptions,
  ConsumerSpec,
  ConsumedBatch,
  ConsumedMessage,
  MessageHeaders,
  BatchControl,
  KafkaAdmin,
  AdminOptions,
  NewTopic,
  PartitionEnds,
  CommittedOffset,
  TopicDescription,
} from './kafka-port/kafka-client.ts';
export { kafkajsClient } from './kafka-port/kafkajs/kafkajs-client.ts';
export {
  DEFAULT_SESSION_TIMEOUT_MS,
  DEFAULT_MAX_WAIT_TIME_MS,
  DEFAULT_CONSUMER_BACKOFF,
} from './kafka/consumer-settings.ts';

// Receiving
export { EVENT_HEADERS } from './kafka/event-headers.ts';
export type { ReceivedEvent, EventValidator } from './kafka/received-event.ts';
export { parseMessage } from './kafka/parse-message.ts';
export type { ParseResult } from './kafka/parse-message.ts';
export { readParkedMessages } from './kafka/read-parked-messages.ts';
export { requeueParkedMessages, discardParkedMessages } from './kafka/parked-operations.ts';
export type { ParkedMessage } from './kafka/read-parked-messages.ts';

// Inbox (critical consumers)
export { startInboxWriter } from './inbox/start-inbox-writer.ts';
export type { InboxWriterDeps } from './inbox/start-inbox-writer.ts';
export { startInboxProcessor } from './inbox/start-inbox-processor.ts';
export type { InboxProcessorDeps } from './inbox/start-inbox-processor.ts';
export type {
  BatchInboxHandler,
  CallingInboxHandler,
  InboxBatchItem,
  InboxHandler,
  TransactionalInboxHandler,
} from './inbox/inbox-handler.ts';
export type { InboxEvent } from './inbox/inbox-event.ts';
export type {
  InboxWriterOptions,
  InboxProcessorOptions,
  InboxWriterHooks,
  InboxProcessorHooks,
  InboxBatchInfo,
  InboxRowInfo,
} from './inbox/inbox-options.ts';
export { DEFAULT_INBOX_PROCESSOR_OPTIONS } from './inbox/inbox-options.ts';
export {
  requeueDeadInboxEvents,
  discardDeadInboxEvents,
  listDeadInboxEvents,
} from './inbox/dead-rows.ts';
export type { DeadInboxEvent } from './inbox/dead-rows.ts';

// Dedup consumer (ordinary consumers: a processed_event row in the effect's transaction)
export { applyOnce } from './dedup-consumer/apply-once.ts';
export { startDedupConsumer } from './dedup-consumer/start-dedup-consumer.ts';
export type { DedupConsumerDeps, DedupEffect } from './dedup-consumer/start-dedup-consumer.ts';
export type { DedupConsumerOptions, DedupConsumerHooks } from './dedup-consumer/dedup-options.ts';

// Operations
export { createOutboxMetrics } from './operations/metrics.ts';
export type { OutboxMetrics, OutboxMetricsOptions } from './operations/metrics.ts';
export { StallWatch, DEFAULT_STALL_AFTER_MS } from './operations/stall-watch.ts';
export { ConsumerLag, DEFAULT_CONSUMER_LAG_OPTIONS } from './operations/consumer-lag.ts';
export type { ConsumerLagOptions, PartitionLag } from './operations/consumer-lag.ts';
export type {
  ProgressReporter,
  WorkerHealth,
  StallWatchOptions,
} from './operations/stall-watch.ts';
export { replayOutbox } from './operations/replay.ts';
export type { ReplaySelection } from './operations/replay.ts';
export { runRetention, previewRetention } from './operations/retention.ts';
export type {
  RetentionOptions,
  RetentionResult,
  RetentionTable,
  RetentionWindow,
} from './operations/retention.ts';
export { runRetentionExclusively, RETENTION_LOCK_ID } from './operations/retention-lock.ts';
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

// Trace context (W3C traceparent) carried from hop to hop in the events' headers
export {
  TRACE_HEADERS,
  childSpan,
  formatTraceparent,
  parseTraceparent,
  startTrace,
  traceHeaders,
  traceOf,
} from './trace/trace-context.ts';
export type { TraceContext } from './trace/trace-context.ts';

// CDC relay (Debezium on Kafka Connect, instead of the polling relay)
export { registerCdcRelay, removeCdcRelay } from './cdc/cdc-relay.ts';
export type { CdcRelayDeps } from './cdc/cdc-relay.ts';
export { startCdcRelay } from './cdc/start-cdc-relay.ts';
export type { CdcRelayWorkerDeps } from './cdc/start-cdc-relay.ts';
export { cdcConnectorConfig, heartbeatTopic, replicationName } from './cdc/cdc-connector-config.ts';
export type { CdcConnectorSpec } from './cdc/cdc-connector-config.ts';
export { ConnectApi, connectorFailure, isConnectorRunning } from './cdc/connect-api.ts';
export type { ConnectorStatus } from './cdc/connect-api.ts';
