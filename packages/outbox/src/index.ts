// The core of @outbox-inbox/outbox: what a service needs to write, publish and receive events.
// Everything else has an entry point of its own: /kafkajs and /platformatic (the adapters),
// /kafka-port (the port's types, for an adapter or a tool that talks to Kafka through it),
// /ops (metrics, stall watch, retention, replay, triage), /trace, /cdc and /testing (the
// fault-injection hooks). test/public-surface.test.ts holds this list to what a service uses.

// Schema
export type { OutboxTables } from './schema/tables.ts';
export { outboxMigrations, migrateOutbox } from './schema/migrations.ts';

// Shared
export { silentLogger, type Logger } from './logger.ts';
export { OutboxError, type OutboxErrorCode } from './errors.ts';
export type { Worker } from './worker.ts';
export { createPgPool } from './pg-pool/create-pg-pool.ts';

// Write side
export { enqueue, enqueueMany, type EnqueueOptions } from './enqueue/enqueue.ts';
export type { OutboxEventInput } from './enqueue/outbox-event-input.ts';
export { createOutboxNotifier } from './enqueue/commit-notifier.ts';

// Relay
export { startRelay, type RelayDeps } from './relay/start-relay.ts';
export type { RelayOptions } from './relay/relay-options.ts';

// The port to Kafka (its adapters are /kafkajs and /platformatic; its types are /kafka-port)
export type { KafkaClient } from './kafka-port/kafka-client.ts';
export type { ReceivedEvent, EventValidator } from './receive/received-event.ts';

// Inbox writer (critical consumers: each message into inbox_event, then the offset)
export { startInboxWriter } from './inbox-writer/start-inbox-writer.ts';
export type { InboxWriterDeps } from './inbox-writer/writer-deps.ts';
export type { InboxWriterOptions } from './inbox-writer/writer-options.ts';

// Inbox processor (the stored rows through their handlers, in local transactions)
export {
  startInboxProcessor,
  type InboxProcessorDeps,
} from './inbox-processor/start-inbox-processor.ts';
export {
  DEFAULT_INBOX_PROCESSOR_OPTIONS,
  type InboxProcessorOptions,
} from './inbox-processor/processor-options.ts';
export type {
  BatchInboxHandler,
  CallingInboxHandler,
  InboxBatchItem,
  InboxHandler,
  TransactionalInboxHandler,
} from './inbox-processor/inbox-handler.ts';
export type { InboxEvent } from './inbox-processor/inbox-event.ts';

// Dedup consumer (ordinary consumers: a processed_event row in the effect's transaction)
export { startDedupConsumer } from './dedup-consumer/start-dedup-consumer.ts';
export type { DedupConsumerDeps, DedupEffect } from './dedup-consumer/dedup-deps.ts';
export type { DedupConsumerOptions } from './dedup-consumer/dedup-options.ts';
