import { sql, type Kysely, type RawBuilder } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/** A moment (Date), or an age in ms: rows older than it go. */
export type RetentionWindow = Date | number;

/** A table of the service's own that retention keeps bounded (idempotency keys, say). */
export interface RetentionTable {
  readonly table: string;
  /** The timestamptz column that dates a row. */
  readonly column: string;
  readonly olderThan: RetentionWindow;
}

export interface RetentionOptions {
  /** Published outbox rows published before this go. Keep them as long as you may replay. */
  readonly olderThan: RetentionWindow;
  /**
   * Who publishes the outbox. `relay` (the default): the polling relay, which marks
   * `published_at`; only marked rows go. `cdc`: Debezium reads the inserts from the WAL and marks
   * nothing, so outbox rows go by age (`created_at` before `olderThan`). That loses no event: a
   * row's insert stays in the WAL its replication slot keeps until the connector has sent it.
   */
  readonly outboxPublishedBy?: 'relay' | 'cdc';
  /**
   * `processed_event` dedup rows older than this go; kept when absent. Keep them longer than
   * any redelivery can happen (Kafka retention, replays), or repeats will apply again.
   */
  readonly processedEventsOlderThan?: RetentionWindow;
  /**
   * Processed inbox rows older than this go. The inbox dedups against the rows it still has,
   * so this is its dedup window: it may not be shorter than the `processed_event` one (refused
   * with INVALID_OPTIONS). Default: the same as `processedEventsOlderThan`, and kept when that
   * is absent.
   */
  readonly inboxOlderThan?: RetentionWindow;
  /** Parked messages parked before this go; kept when absent (they wait for an operator). */
  readonly parkedOlderThan?: RetentionWindow;
  /** The service's own tables, each with its window. */
  readonly tables?: readonly RetentionTable[];
  /** Rows deleted per statement (each its own short transaction). Default 1000. */
  readonly batchSize?: number;
}

export interface RetentionResult {
  readonly outboxDeleted: number;
  readonly inboxDeleted: number;
  readonly processedEventsDeleted: number;
  readonly parkedDeleted: number;
  /** Rows deleted (or, for a preview, that would be) per table: every table of the plan. */
  readonly byTable: Readonly<Record<string, number>>;
}

/** One table's share of a retention run: which rows may go, never anything else. */
interface RetentionStep {
  readonly table: string;
  readonly condition: RawBuilder<unknown>;
  /** FOR UPDATE SKIP LOCKED: rows a worker holds right now are left for the next run. */
  readonly skipLocked: boolean;
}

/**
 * Deletes published outbox rows, processed inbox rows, `processed_event` rows, parked
 * messages and the rows of the service's own `tables`, each older than its own window, in
 * bounded batches. Unpublished (FAILED included) outbox rows and unprocessed (or dead) inbox
 * rows are never touched: the conditions are on `published_at` / `processed`, not on age
 * alone (outbox rows published by CDC excepted: see `outboxPublishedBy`). Throws INVALID_OPTIONS, deleting nothing, when the inbox window would be shorter
 * than the `processed_event` window.
 */
export async function runRetention<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: RetentionOptions,
): Promise<RetentionResult> {
  const result = await runRetentionBatches(outboxDb(dbIn), options, undefined);
  return result ?? toResult({});
}

/**
 * {@link runRetention} with every batch in a transaction of its own that first takes the
 * transaction-level advisory lock `lockId`: undefined, deleting nothing, when another holds it
 * at the first batch; a run that meets it later stops there, keeping what it deleted. The lock
 * lives no longer than one transaction, so it works on any connection, through a pooler in
 * transaction mode too, where a session lock would stay on whichever server connection took it.
 */
export async function runRetentionLocked<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: RetentionOptions,
  lockId: bigint,
): Promise<RetentionResult | undefined> {
  return runRetentionBatches(outboxDb(dbIn), options, lockId);
}

async function runRetentionBatches(
  db: Kysely<OutboxTables>,
  options: RetentionOptions,
  lockId: bigint | undefined,
): Promise<RetentionResult | undefined> {
  const batchSize = validBatchSize(options.batchSize ?? 1000);
  const deleted: Record<string, number> = {};
  const steps = retentionPlan(options, Date.now());
  for (const step of steps) {
    const drained = await drain(db, step, batchSize, lockId);
    deleted[step.table] = drained.deleted;
    if (drained.lockTaken) continue;
    if (step === steps[0] && drained.deleted === 0) return undefined;
    break;
  }
  return toResult(deleted);
}

/** What {@link runRetention} would delete now, per table, without deleting anything. */
export async function previewRetention<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: RetentionOptions,
): Promise<RetentionResult> {
  const db = outboxDb(dbIn);
  validBatchSize(options.batchSize ?? 1000);
  const counted: Record<string, number> = {};
  for (const step of retentionPlan(options, Date.now())) {
    const result = await sql<{ n: string }>`
      SELECT count(*) AS n FROM ${sql.table(step.table)} WHERE ${step.condition}
    `.execute(db);
    counted[step.table] = Number(result.rows[0]?.n ?? 0);
  }
  return toResult(counted);
}

/** The tables a run visits, in order, each with the condition of its rows that may go. */
function retentionPlan(options: RetentionOptions, now: number): RetentionStep[] {
  const cutoff = toCutoff(options.olderThan, now);
  const processedCutoff = optionalCutoff(options.processedEventsOlderThan, now);
  const inboxCutoff =
    options.inboxOlderThan === undefined ? processedCutoff : toCutoff(options.inboxOlderThan, now);
  if (
    inboxCutoff !== undefined &&
    (processedCutoff === undefined || inboxCutoff > processedCutoff)
  ) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `inboxOlderThan (${describeWindow(options.inboxOlderThan)}) is shorter than the processed_event window ` +
        `(processedEventsOlderThan: ${describeWindow(options.processedEventsOlderThan)}): a redelivered event ` +
        'older than the inbox window would be stored and handled again. Make inboxOlderThan at ' +
        'least as long, or leave it out to use the processed_event window.',
    );
  }
  const parkedCutoff = optionalCutoff(options.parkedOlderThan, now);
  const steps: RetentionStep[] = [
    {
      table: 'outbox_event',
      condition:
        options.outboxPublishedBy === 'cdc'
          ? sql`created_at < ${cutoff}`
          : sql`published_at IS NOT NULL AND published_at < ${cutoff}`,
      skipLocked: true,
    },
  ];
  if (inboxCutoff !== undefined) {
    steps.push({
      table: 'inbox_event',
      condition: sql`processed AND processed_at < ${inboxCutoff}`,
      skipLocked: true,
    });
  }
  if (processedCutoff !== undefined) {
    steps.push({
      table: 'processed_event',
      condition: sql`processed_at < ${processedCutoff}`,
      skipLocked: false,
    });
  }
  if (parkedCutoff !== undefined) {
    steps.push({
      table: 'parked_message',
      condition: sql`parked_at < ${parkedCutoff}`,
      skipLocked: true,
    });
  }
  for (const table of options.tables ?? []) {
    steps.push({
      table: table.table,
      condition: sql`${sql.ref(table.column)} < ${toCutoff(table.olderThan, now)}`,
      skipLocked: true,
    });
  }
  return steps;
}

/**
 * Deletes a step's rows `batchSize` at a time, each batch in a transaction of its own (under
 * `lockId`, when given); `lockTaken` false when a batch found the lock held and stopped.
 *
 * Each batch's DELETE is planned for its cutoff (`plan_cache_mode`, local to the batch, set in
 * the statement that takes the lock). A plan PostgreSQL keeps for a prepared statement is made
 * without the cutoff: it guesses that a third of the table is older, and then a read of the
 * whole table looks cheaper than the age index for a batch of a thousand rows. Retention
 * repeats one text batch after batch and run after run, so its pool would prepare it.
 */
async function drain(
  db: Kysely<OutboxTables>,
  step: RetentionStep,
  batchSize: number,
  lockId: bigint | undefined,
): Promise<{ deleted: number; lockTaken: boolean }> {
  let total = 0;
  for (;;) {
    const deleted = await inTransaction(db, async (trx) => {
      const lock = await sql<{ locked: boolean }>`
        SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
          ${lockId === undefined ? sql`true` : sql`pg_try_advisory_xact_lock(${lockId})`} AS locked
      `.execute(trx);
      return lock.rows[0]?.locked === true ? deleteBatch(trx, step, batchSize) : undefined;
    });
    if (deleted === undefined) return { deleted: total, lockTaken: false };
    total += deleted;
    if (deleted < batchSize) return { deleted: total, lockTaken: true };
  }
}

/** `work` in a transaction of its own, or in the caller's when `db` is one already. */
function inTransaction<T>(
  db: Kysely<OutboxTables>,
  work: (trx: Kysely<OutboxTables>) => Promise<T>,
): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

async function deleteBatch(
  db: Kysely<OutboxTables>,
  step: RetentionStep,
  batchSize: number,
): Promise<number> {
  // By physical row id, so the same statement serves any table, with or without a key. The
  // batch size is a literal (a validated whole number), the cutoff is planned for (see drain).
  const result = await sql`
    DELETE FROM ${sql.table(step.table)} WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM ${sql.table(step.table)}
      WHERE ${step.condition}
      LIMIT ${sql.lit(batchSize)}
      ${step.skipLocked ? sql`FOR UPDATE SKIP LOCKED` : sql``}))
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

function validBatchSize(batchSize: number): number {
  if (!(Number.isInteger(batchSize) && batchSize >= 1)) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `batchSize must be a whole number of at least 1 (got ${batchSize})`,
    );
  }
  return batchSize;
}

function toResult(byTable: Record<string, number>): RetentionResult {
  return {
    outboxDeleted: byTable['outbox_event'] ?? 0,
    inboxDeleted: byTable['inbox_event'] ?? 0,
    processedEventsDeleted: byTable['processed_event'] ?? 0,
    parkedDeleted: byTable['parked_message'] ?? 0,
    byTable: Object.freeze({ ...byTable }),
  };
}

function toCutoff(window: RetentionWindow, now: number): Date {
  return window instanceof Date ? window : new Date(now - window);
}

function optionalCutoff(window: RetentionWindow | undefined, now: number): Date | undefined {
  return window === undefined ? undefined : toCutoff(window, now);
}

function describeWindow(window: RetentionWindow | undefined): string {
  if (window === undefined) return 'not set: kept for ever';
  return window instanceof Date ? `before ${window.toISOString()}` : `${window} ms`;
}
