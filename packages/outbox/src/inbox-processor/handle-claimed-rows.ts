import { sql, type Kysely, type Transaction } from 'kysely';
import { backoffDelay } from '../internal/backoff.ts';
import { describe } from '../internal/state-log.ts';
import { outboxTrx } from '../internal/views.ts';
import { AnnouncedWriter } from '../enqueue/announced-writer.ts';
import { ANNOUNCE_WRITER } from '../enqueue/announced-writer.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, type EventSpan } from '../trace/spans.ts';
import { AttemptGuard } from './attempt-guard.ts';
import type { InboxRow } from './claim-inbox-rows.ts';
import { inboxEventOf, type InboxEvent } from './inbox-event.ts';
import { isBatchHandler, type BatchInboxHandler, type InboxHandler } from './inbox-handler.ts';
import type { InboxProcessorHooks, InboxProcessorOptions } from './processor-options.ts';
import { withTimeout } from './with-timeout.ts';

export interface ClaimedRowsDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly handlers: Readonly<Record<string, InboxHandler<DB>>>;
  readonly hooks?: InboxProcessorHooks | undefined;
  readonly options: InboxProcessorOptions;
}

/** What became of one claimed row's attempt. */
export type RowOutcome =
  | { readonly kind: 'processed' }
  /** The handler failed and the row waits for its next attempt. */
  | { readonly kind: 'failed'; readonly cause: unknown }
  | { readonly kind: 'dead'; readonly reason: string; readonly cause?: unknown }
  /** Another attempt claimed the row while this one ran past its lease: nothing was written. */
  | { readonly kind: 'lost' };

/**
 * The claim's write transaction never began: no pooled connection came within the pool's
 * timeout (every connection busy while PostgreSQL is slow), or BEGIN failed. No handler wrote
 * anything. `untried` are the attempts spent on that wait alone (a `call` that failed or timed
 * out did use its attempt, and is not among them); the processor gives them back.
 */
export class WriteNotStarted extends Error {
  readonly untried: readonly InboxRow[];
  constructor(untried: readonly InboxRow[], cause: unknown) {
    super(`the inbox write transaction did not start: ${describe(cause)}`, { cause });
    this.untried = untried;
  }
}

/** A handler's own failure (thrown or timed out), as opposed to the database failing. */
class HandlerFailed extends Error {
  constructor(cause: unknown) {
    super('inbox handler failed', { cause });
  }
}

interface Attempt<DB> {
  readonly row: InboxRow;
  readonly event: InboxEvent;
  readonly handler: InboxHandler<DB> | undefined;
  readonly span: EventSpan;
  readonly started: number;
  /** A calling handler's result, once its `call` succeeded. */
  called?: { readonly result: unknown };
  outcome?: RowOutcome;
}

/**
 * Runs the claimed rows' attempts: the calling handlers' `call`s first, all at once and with
 * no transaction; then one transaction that locks the rows (still this claim's: the counts
 * match) and runs each row's handler (or `apply`) in a savepoint of its own. A handler that
 * throws or times out is rolled back to its savepoint and its failure recorded, so the rows
 * beside it keep their work; every row done is marked `processed` in that transaction, which
 * commits once. Each row's effect and mark commit together or not at all, as they would in a
 * transaction of their own, at one commit (one WAL flush) for the claim instead of one per row.
 * The rows of a batch handler share one savepoint and one `applyBatch`; if it fails, it is
 * rolled back and each of its rows is applied alone, as above, so a failure stays its row's.
 * Throws WriteNotStarted when that transaction could not begin.
 */
export async function handleClaimedRows<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  /** Claimed rows with an attempt left (none the claim gave up on). */
  rows: readonly InboxRow[],
): Promise<{ readonly row: InboxRow; readonly outcome: RowOutcome }[]> {
  const attempts = rows.map((row) => startAttempt(deps, row));
  await Promise.all(attempts.map((attempt) => call(deps, attempt)));
  let begun = false;
  try {
    await deps.db.transaction().execute((trx) => {
      begun = true;
      return writeAttempts(deps, trx, attempts);
    });
  } catch (error) {
    for (const attempt of attempts) attempt.span.end(error);
    if (!begun) {
      const untried = attempts.filter((attempt) => attempt.outcome === undefined);
      throw new WriteNotStarted(
        untried.map((attempt) => attempt.row),
        error,
      );
    }
    throw error;
  }
  return attempts.map((attempt) => {
    const outcome = attempt.outcome ?? { kind: 'lost' };
    attempt.span.end(
      outcome.kind === 'failed' || outcome.kind === 'dead' ? outcome.cause : undefined,
    );
    return { row: attempt.row, outcome };
  });
}

function startAttempt<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  row: InboxRow,
): Attempt<DB> {
  // The handler continues the trace of the event it handles: its writes (an enqueue) are
  // children of this span.
  const span = startEventSpan({
    operation: 'handle',
    topic: row.topic,
    eventId: row.event_id,
    eventType: row.event_type,
    partitionKey: row.partition_key,
    headers: row.headers,
    partition: row.kafka_partition,
    offset: row.kafka_offset,
  });
  const attempt: Attempt<DB> = {
    row,
    event: inboxEventOf(row),
    handler: deps.handlers[row.event_type],
    span,
    started: performance.now(),
  };
  if (attempt.handler === undefined) {
    attempt.outcome = { kind: 'dead', reason: `no handler for event type "${row.event_type}"` };
  }
  return attempt;
}

/** A calling handler's `call`, outside any transaction, within the handler timeout. */
async function call<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  attempt: Attempt<DB>,
): Promise<void> {
  const { handler } = attempt;
  if (attempt.outcome !== undefined || handler === undefined || typeof handler === 'function') {
    return;
  }
  const beforeHandler = deps.hooks?.beforeHandler;
  // A batch handler's `call` is optional; without one its events' result is undefined.
  const invoke = isBatchHandler(handler) ? handler.call?.bind(handler) : handler.call.bind(handler);
  const aborts = new AbortController();
  try {
    const result = await attempt.span.activate(() =>
      withTimeout(
        (async () => {
          if (beforeHandler !== undefined) await beforeHandler(attempt.event);
          return invoke === undefined ? undefined : invoke(attempt.event, aborts.signal);
        })(),
        deps.options.handlerTimeoutMs,
        () => {
          aborts.abort();
          return Promise.resolve();
        },
      ),
    );
    attempt.called = { result };
  } catch (error) {
    attempt.outcome = failure(deps.options, attempt.row, error);
  }
}

/** A failed attempt waits for the next one, or is dead when it was the last. */
function failure(options: InboxProcessorOptions, row: InboxRow, cause: unknown): RowOutcome {
  return row.attempts >= options.maxAttempts
    ? { kind: 'dead', reason: describeError(cause), cause }
    : { kind: 'failed', cause };
}

/** The batch's transaction: lock, each row in its savepoint, failures recorded, marks. */
async function writeAttempts<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  typedTrx: Transaction<DB>,
  attempts: readonly Attempt<DB>[],
): Promise<void> {
  const trx = outboxTrx(typedTrx);
  const locked = await lockOurRows(trx, deps.options, attempts);
  const ours = new Set(locked.rows.map((row) => row.event_id));
  const pid = locked.rows[0]?.pid;
  const announced = typedTrx.withPlugin(new AnnouncedWriter());
  const done: Attempt<DB>[] = [];
  const batches = new Map<BatchInboxHandler<DB, unknown>, Attempt<DB>[]>();
  /** Runs one row's write in a savepoint of its own; a failure rolls back to it and counts. */
  const writeAlone = async (attempt: Attempt<DB>, work: () => Work<DB>): Promise<void> => {
    if (attempt.outcome === undefined && pid !== undefined) {
      await sql`SAVEPOINT inbox_row`.execute(trx);
      try {
        await guardedWrite(deps, announced, [attempt], pid, work());
        done.push(attempt);
        return;
      } catch (error) {
        if (!(error instanceof HandlerFailed)) throw error;
        await sql`ROLLBACK TO SAVEPOINT inbox_row`.execute(trx);
        attempt.outcome = failure(deps.options, attempt.row, error.cause);
      }
    }
    await recordFailure(trx, deps.options, attempt.row, attempt.outcome);
  };
  for (const attempt of attempts) {
    if (!ours.has(attempt.row.event_id) || pid === undefined) {
      attempt.outcome = { kind: 'lost' };
      continue;
    }
    if (attempt.outcome === undefined && isBatchHandler(attempt.handler)) {
      batches.set(attempt.handler, [...(batches.get(attempt.handler) ?? []), attempt]);
      continue;
    }
    await writeAlone(attempt, () => rowWork(deps, attempt));
  }
  for (const [handler, batch] of batches) {
    if (pid === undefined) break;
    const applyAll = batchWork(handler, batch);
    // The happy path: the whole batch in one savepoint, its statements not growing with it.
    if (batch.length > 1) {
      await sql`SAVEPOINT inbox_batch`.execute(trx);
      try {
        await guardedWrite(deps, announced, batch, pid, applyAll);
        done.push(...batch);
        continue;
      } catch (error) {
        if (!(error instanceof HandlerFailed)) throw error;
        // Some row of the batch failed, maybe one only: nothing of the batch stays, and each
        // row is applied alone below, so only the rows that fail alone lose their attempt.
        await sql`ROLLBACK TO SAVEPOINT inbox_batch`.execute(trx);
      }
    }
    for (const attempt of batch) await writeAlone(attempt, () => batchWork(handler, [attempt]));
  }
  await markProcessed(deps, trx, done);
}

/** The `processed` mark of the rows whose writes stand, in one statement. */
async function markProcessed<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  trx: Transaction<OutboxTables>,
  done: readonly Attempt<DB>[],
): Promise<void> {
  for (const attempt of done) {
    await deps.hooks?.beforeMarkProcessed?.({
      eventId: attempt.row.event_id,
      eventType: attempt.row.event_type,
      partitionKey: attempt.row.partition_key,
    });
  }
  if (done.length > 0) {
    await sql`
      UPDATE inbox_event SET processed = true, processed_at = now()
      WHERE event_id = ANY(${done.map((a) => a.row.event_id)}::uuid[])
    `.execute(trx);
  }
  for (const attempt of done) attempt.outcome = { kind: 'processed' };
}

/** A write in the claim's transaction, given the transaction its handler sees. */
type Work<DB> = (trx: Transaction<DB>) => Promise<void>;

/** One row's handler, or a calling handler's `apply` with what its `call` returned. */
function rowWork<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  attempt: Attempt<DB>,
): Work<DB> {
  const { handler, event } = attempt;
  if (typeof handler === 'function') {
    const beforeHandler = deps.hooks?.beforeHandler;
    return async (trx) => {
      if (beforeHandler !== undefined) await beforeHandler(event);
      await handler(trx, event);
    };
  }
  if (handler !== undefined && !isBatchHandler(handler) && attempt.called !== undefined) {
    const { result } = attempt.called;
    return (trx) => handler.apply(trx, event, result);
  }
  throw new Error(`inbox row ${event.eventId} reached its write without a handler's result`);
}

/** A batch handler's `applyBatch` for `batch`, each event with what its `call` returned. */
function batchWork<DB extends OutboxTables>(
  handler: BatchInboxHandler<DB, unknown>,
  batch: readonly Attempt<DB>[],
): Work<DB> {
  const items = batch.map((attempt) => {
    if (attempt.called === undefined) {
      throw new Error(`inbox row ${attempt.event.eventId} reached its write without a result`);
    }
    return { event: attempt.event, result: attempt.called.result };
  });
  return (trx) => handler.applyBatch(trx, items);
}

/**
 * Runs `work` for `attempts` within what is left of their lease (all of `handlerTimeoutMs`
 * for a handler with no `call`); throws HandlerFailed when it throws or times out. Past the
 * timeout, the handler's transaction is closed to it and a query it has running is cancelled.
 */
async function guardedWrite<DB extends OutboxTables>(
  deps: ClaimedRowsDeps<DB>,
  trx: Transaction<DB>,
  attempts: readonly Attempt<DB>[],
  pid: number,
  work: Work<DB>,
): Promise<void> {
  const { options } = deps;
  const guard = new AttemptGuard();
  const guarded = trx.withPlugin(guard);
  // What is left of the attempts' lease after their `call`s (none for a plain handler).
  const started = Math.min(
    ...attempts.map((a) => (typeof a.handler === 'function' ? Infinity : a.started)),
  );
  const timeoutMs = Number.isFinite(started)
    ? Math.max(options.handlerTimeoutMs - (performance.now() - started), 1000)
    : options.handlerTimeoutMs;
  const run = () =>
    withTimeout(work(guarded), timeoutMs, async () => {
      guard.close();
      // Stops a query the handler has running, so the rollback need not wait for it.
      await sql`SELECT pg_cancel_backend(${pid})`.execute(deps.db).catch(() => undefined);
    });
  const [only] = attempts;
  try {
    // One row's write continues its event's trace; a batch's belongs to no single one.
    await (attempts.length === 1 && only !== undefined ? only.span.activate(run) : run());
  } catch (error) {
    throw new HandlerFailed(error);
  } finally {
    guard.close();
  }
}

/** The error, and the next try after a backoff, or dead. */
async function recordFailure(
  trx: Transaction<OutboxTables>,
  options: InboxProcessorOptions,
  row: InboxRow,
  outcome: RowOutcome | undefined,
): Promise<void> {
  if (outcome?.kind !== 'failed' && outcome?.kind !== 'dead') return;
  const delaySeconds = backoffDelay(options.retryBackoff, row.attempts) / 1000;
  const dead = outcome.kind === 'dead';
  await trx
    .updateTable('inbox_event')
    .set({
      last_error: dead ? outcome.reason : describeError(outcome.cause),
      next_attempt_at: sql<Date>`now() + make_interval(secs => ${delaySeconds})`,
      dead_at: dead ? sql<Date>`now()` : null,
    })
    .where('event_id', '=', row.event_id)
    .where('attempts', '=', row.attempts)
    .where('processed', '=', false)
    .execute();
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? `${describe(error)}` : String(error);
  return text.slice(0, 2000);
}

/** Locks the rows still this claim's; see the comment in it for why it waits. */
async function lockOurRows<DB extends OutboxTables>(
  trx: Transaction<OutboxTables>,
  options: InboxProcessorOptions,
  attempts: readonly Attempt<DB>[],
) {
  // Locks the rows still this claim's and bounds the session. It waits for a lock rather than
  // skipping: a concurrent claim statement that read a row before our claim committed locks it
  // for a moment while rechecking it (READ COMMITTED), and skipping then would drop a healthy
  // attempt until its lease ended. Nothing holds the lock longer: a claim never takes a row
  // that is locked.
  // It also announces the transaction as an outbox writer (writer lock, then xid), so that
  // handlers' `enqueue`s send no statement of their own for it: the transaction holds an xid
  // from this statement on anyway (its row locks). The fence waits for the transaction from
  // here to its commit, which the short write transaction allows.
  return sql<{ event_id: string; pid: number }>`
    SELECT i.event_id, pg_backend_pid() AS pid, ${ANNOUNCE_WRITER},
      set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true),
      set_config('idle_in_transaction_session_timeout', ${`${options.statementTimeoutMs}ms`}, true)
    FROM inbox_event i
    JOIN unnest(${attempts.map((a) => a.row.event_id)}::uuid[],
        ${attempts.map((a) => a.row.attempts)}::int[]) AS mine(event_id, attempts)
      ON mine.event_id = i.event_id AND mine.attempts = i.attempts
    WHERE NOT i.processed AND i.dead_at IS NULL
    ORDER BY i.event_id
    FOR UPDATE OF i
  `.execute(trx);
}
