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
export { createPgPool } from './pg-pool.ts';
export type { ListenConfig } from './internal/listener.ts';

// Write side
export { enqueue, enqueueMany } from './outbox/enqueue.ts';
export type { EnqueueOptions } from './outbox/enqueue.ts';
export type { OutboxEventInput } from './outbox/outbox-event-input.ts';
export { uuidv7 } from './outbox/uuid-v7.ts';
export { OUTBOX_CHANNEL, INBOX_CHANNEL } from './outbox/channels.ts';

// Relay
export { startRelay } from './relay/start-relay.ts';
export type { RelayDeps } from './relay/start-relay.ts';
export type { RelayOptions, RelayHooks, RelayBatchEvent } from './relay/relay-options.ts';
export { DEFAULT_RELAY_OPTIONS } from './relay/relay-options.ts';

// Receiving
export type { ReceivedEvent, EventValidator } from './kafka/received-event.ts';
export { parseMessage } from './kafka/parse-message.ts';
export type { ParseResult } from './kafka/parse-message.ts';

// Inbox (critical consumers)
export { startInboxWriter } from './inbox/start-inbox-writer.ts';
export type { InboxWriterDeps } from './inbox/start-inbox-writer.ts';
export { startInboxProcessor } from './inbox/start-inbox-processor.ts';
export type { InboxProcessorDeps, InboxHandler } from './inbox/start-inbox-processor.ts';
export type { InboxEvent } from './inbox/inbox-event.ts';
export type { InboxWriterOptions, InboxProcessorOptions } from './inbox/inbox-options.ts';
export { DEFAULT_INBOX_PROCESSOR_OPTIONS } from './inbox/inbox-options.ts';
export { requeueDeadInboxEvents, discardDeadInboxEvents } from './inbox/dead-rows.ts';

// Default receiver (processed_event dedup)
export { runOnce } from './receiver/run-once.ts';
export { startDedupConsumer } from './receiver/start-dedup-consumer.ts';
export type { DedupConsumerDeps } from './receiver/start-dedup-consumer.ts';
export type { DedupConsumerOptions } from './receiver/dedup-options.ts';

// Operations
export { createOutboxMetrics } from './operations/metrics.ts';
export type { OutboxMetrics } from './operations/metrics.ts';
export { replayOutbox } from './operations/replay.ts';
export type { ReplaySelection } from './operations/replay.ts';
export { runRetention } from './operations/retention.ts';
export type { RetentionOptions, RetentionResult } from './operations/retention.ts';
