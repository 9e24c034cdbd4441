// Public surface of @outbox-inbox/outbox. FIRST COMMIT: signatures only; the bodies that throw
// "not implemented" are replaced by the real modules in the following commits.
import type { Kafka } from 'kafkajs';
import type { Kysely, Transaction } from 'kysely';
import type pg from 'pg';
import type { Logger } from './logger.ts';
import type { OutboxMetrics } from './operations/metrics.ts';
import type { InboxEvent } from './inbox/inbox-event.ts';
import type { InboxProcessorOptions, InboxWriterOptions } from './inbox/inbox-options.ts';
import type { ReceivedEvent } from './kafka/received-event.ts';
import type { DedupConsumerOptions } from './receiver/dedup-options.ts';
import type { OutboxTables } from './schema/tables.ts';

export type {
  OutboxTables,
  OutboxEventTable,
  InboxEventTable,
  ProcessedEventTable,
  ParkedMessageTable,
} from './schema/tables.ts';
export { outboxMigrations, migrateOutbox, OUTBOX_MIGRATION_TABLE } from './schema/migrations.ts';
export type { Logger } from './logger.ts';
export { silentLogger } from './logger.ts';
export { OutboxError } from './errors.ts';
export type { OutboxErrorCode } from './errors.ts';
export type { BackoffOptions } from './internal/backoff.ts';
export type { OutboxEventInput } from './outbox/outbox-event-input.ts';
export type { RelayOptions, RelayHooks, RelayBatchEvent } from './relay/relay-options.ts';
export { DEFAULT_RELAY_OPTIONS } from './relay/relay-options.ts';
export type { ReceivedEvent, EventValidator } from './kafka/received-event.ts';
export type { InboxEvent } from './inbox/inbox-event.ts';
export type { InboxWriterOptions, InboxProcessorOptions } from './inbox/inbox-options.ts';
export { DEFAULT_INBOX_PROCESSOR_OPTIONS } from './inbox/inbox-options.ts';
export type { DedupConsumerOptions } from './receiver/dedup-options.ts';
export type { OutboxMetrics } from './operations/metrics.ts';
export { createOutboxMetrics } from './operations/metrics.ts';

export type { Worker } from './worker.ts';
import type { Worker } from './worker.ts';
export { enqueue, enqueueMany } from './outbox/enqueue.ts';
export type { EnqueueOptions } from './outbox/enqueue.ts';
export { uuidv7 } from './outbox/uuid-v7.ts';
export { startRelay } from './relay/start-relay.ts';
export type { RelayDeps } from './relay/start-relay.ts';

/** Connection used for LISTEN (a dedicated `pg.Client`, reconnected after a restart). */
export type ListenConfig = pg.ClientConfig;

const notImplemented = (): never => {
  throw new Error('not implemented yet');
};

export interface InboxWriterDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: InboxWriterOptions;
}

/** Consumes `topics` into `inbox_event` (one INSERT ... ON CONFLICT DO NOTHING per batch). */
export async function startInboxWriter<DB extends OutboxTables>(
  deps: InboxWriterDeps<DB>,
): Promise<Worker> {
  void deps;
  return notImplemented();
}

export type InboxHandler<DB> = (trx: Transaction<DB>, event: InboxEvent) => Promise<void>;

export interface InboxProcessorDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  /** By event type; a type without a handler is marked dead with a clear reason. */
  readonly handlers: Readonly<Record<string, InboxHandler<DB>>>;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly listen?: ListenConfig;
  readonly options?: Partial<InboxProcessorOptions>;
}

/** Handles inbox rows: per key one at a time, oldest first, each in its own transaction. */
export function startInboxProcessor<DB extends OutboxTables>(deps: InboxProcessorDeps<DB>): Worker {
  void deps;
  return notImplemented();
}

/**
 * The default receiver: records (consumer, eventId) in `processed_event` and runs `effect`
 * in the same transaction. Returns false (and does nothing) for a repeat.
 */
export async function runOnce<DB extends OutboxTables>(
  trx: Transaction<DB>,
  consumer: string,
  eventId: string,
  effect: () => Promise<void>,
): Promise<boolean> {
  void [trx, consumer, eventId, effect];
  return notImplemented();
}

export interface DedupConsumerDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: DedupConsumerOptions;
  readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
}

/** A consumer that applies each event once via `runOnce`, parking malformed messages. */
export async function startDedupConsumer<DB extends OutboxTables>(
  deps: DedupConsumerDeps<DB>,
): Promise<Worker> {
  void deps;
  return notImplemented();
}

export interface ReplaySelection {
  readonly fromId?: string | number;
  readonly toId?: string | number;
  readonly since?: Date;
  readonly until?: Date;
  readonly topic?: string;
}

/** Marks the selected published rows unpublished again, so the relay republishes them in order. */
export async function replayOutbox<DB extends OutboxTables>(
  db: Kysely<DB>,
  selection: ReplaySelection,
): Promise<number> {
  void [db, selection];
  return notImplemented();
}

export interface RetentionOptions {
  /** Rows published / processed before this moment (Date) or longer ago than this (ms). */
  readonly olderThan: Date | number;
  readonly batchSize?: number;
  /** Also delete processed_event dedup rows older than this; kept when absent. */
  readonly processedEventsOlderThan?: Date | number;
}

/** Deletes old published outbox rows and processed inbox rows in bounded batches. */
export async function runRetention<DB extends OutboxTables>(
  db: Kysely<DB>,
  options: RetentionOptions,
): Promise<{ outboxDeleted: number; inboxDeleted: number; processedEventsDeleted: number }> {
  void [db, options];
  return notImplemented();
}
export { createPgPool } from './pg-pool.ts';
