import { sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { backoffDelay } from '../internal/backoff.ts';
import { startListener } from '../internal/listener.ts';
import { describe, StateLog } from '../internal/state-log.ts';
import { outboxDb, outboxTrx } from '../internal/views.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { ProgressReporter } from '../operations/stall-watch.ts';
import { INBOX_CHANNEL } from '../outbox/channels.ts';
import type { CommitNotifier } from '../outbox/commit-notifier.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan } from '../trace/spans.ts';
import type { Worker } from '../worker.ts';
import { AttemptGuard } from './attempt-guard.ts';
import { claimInboxRow, type InboxRow } from './claim-inbox-row.ts';
import type { InboxEvent } from './inbox-event.ts';
import type { InboxHandler } from './inbox-handler.ts';
import {
  resolveInboxProcessorOptions,
  type InboxProcessorHooks,
  type InboxProcessorOptions,
} from './inbox-options.ts';
import { withTimeout } from './with-timeout.ts';

export interface InboxProcessorDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  /** By event type. A type without a handler is marked dead with a clear reason. */
  readonly handlers: Readonly<Record<string, InboxHandler<DB>>>;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  /** Dedicated connection for LISTEN (wake on the writer's NOTIFY); without it, poll only. */
  readonly listen?: pg.ClientConfig;
  readonly options?: Partial<InboxProcessorOptions>;
  /**
   * Wakes the relays after each row's commit, for handlers that enqueue with `notify: false`
   * (see `createOutboxNotifier`); without it, such handlers' events wait for the relays' poll.
   */
  readonly relayNotifier?: CommitNotifier;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: InboxProcessorHooks;
}

type Outcome = 'idle' | 'processed' | 'failed' | 'dead' | 'lost';

/** A handler's own failure (thrown or timed out), as opposed to the database failing. */
class HandlerFailed extends Error {
  constructor(cause: unknown) {
    super('inbox handler failed', { cause });
  }
}

/**
 * Handles inbox rows: per partition key one at a time and oldest first. Each attempt is first
 * counted in a statement of its own, then the handler's writes and the `processed` mark commit
 * in one transaction. A handler that throws or outlives `handlerTimeoutMs` is rolled back;
 * the row gets a backoff, and is marked dead (with its error) after `maxAttempts`. Because
 * the count comes first, a handler that hangs or takes its process down uses up attempts
 * too, and its row goes dead instead of being retried first in line for ever.
 */
export function startInboxProcessor<DB extends OutboxTables>(deps: InboxProcessorDeps<DB>): Worker {
  const options = resolveInboxProcessorOptions(deps.options);
  const { logger, metrics } = deps;
  const db = outboxDb(deps.db);
  const work = new Wakeup();
  const stopping = new Wakeup();
  let running = true;

  const listener =
    options.notify && deps.listen
      ? startListener({
          config: deps.listen,
          channel: INBOX_CHANNEL,
          logger,
          backoff: options.backoff,
          // Wakes one idle worker; each claim that finds a row wakes the next (below). Waking
          // them all sent every worker's claim after the same head: 7.8 claims per row in B7.
          onNotify: () => work.wakeOne(),
        })
      : undefined;

  const processOne = async (progress: ProgressReporter | undefined): Promise<Outcome> => {
    const row = await claimInboxRow(db, {
      maxAttempts: options.maxAttempts,
      leaseMs: options.handlerTimeoutMs,
    });
    progress?.hasWork(row !== undefined);
    if (row === undefined) return 'idle';
    // There may be more: the next idle worker looks while this one handles the row.
    work.wakeOne();
    if (row.gave_up) {
      logDead(row, 'its attempts never finished');
      return 'dead';
    }
    const handler = deps.handlers[row.event_type];
    if (handler === undefined) {
      await recordFailure(row, `no handler for event type "${row.event_type}"`, true);
      return 'dead';
    }
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
    try {
      const outcome = await span.activate(() => attempt(row, handler));
      span.end();
      return outcome;
    } catch (error) {
      span.end(error instanceof HandlerFailed ? error.cause : error);
      if (!(error instanceof HandlerFailed)) throw error;
      metrics?.inboxHandlerFailuresTotal.inc();
      progress?.failed(error.cause);
      const dead = row.attempts >= options.maxAttempts;
      await recordFailure(row, describeError(error.cause), dead);
      if (dead) return 'dead';
      logger.warn(
        {
          component: 'inbox-processor',
          eventId: row.event_id,
          eventType: row.event_type,
          attempts: row.attempts,
          err: error.cause,
        },
        `inbox handler failed (attempt ${row.attempts} of ${options.maxAttempts}); will retry`,
      );
      return 'failed';
    }
  };

  /**
   * Runs the handler (a calling handler's `call` first, outside any transaction) and marks the
   * row processed with the handler's writes, in one transaction; throws HandlerFailed.
   */
  const attempt = async (row: InboxRow, handler: InboxHandler<DB>): Promise<Outcome> => {
    const event = toInboxEvent(row);
    const beforeHandler = deps.hooks?.beforeHandler;
    if (typeof handler === 'function') {
      return inTransaction(row, options.handlerTimeoutMs, async (trx) => {
        if (beforeHandler !== undefined) await beforeHandler(event);
        await handler(trx, event);
      });
    }
    const started = performance.now();
    const aborts = new AbortController();
    let result: unknown;
    try {
      result = await withTimeout(
        (async () => {
          if (beforeHandler !== undefined) await beforeHandler(event);
          return handler.call(event, aborts.signal);
        })(),
        options.handlerTimeoutMs,
        () => {
          aborts.abort();
          return Promise.resolve();
        },
      );
    } catch (error) {
      throw new HandlerFailed(error);
    }
    // What is left of the attempt's lease; a row claimed again meanwhile is found 'lost'.
    const left = Math.max(options.handlerTimeoutMs - (performance.now() - started), 1000);
    return inTransaction(row, left, (trx) => handler.apply(trx, event, result));
  };

  /** `write` and the `processed` mark in one transaction, bounded by `timeoutMs`. */
  const inTransaction = (
    row: InboxRow,
    timeoutMs: number,
    write: (trx: Transaction<DB>) => Promise<void>,
  ): Promise<Outcome> =>
    deps.db.transaction().execute(async (typedTrx) => {
      const trx = outboxTrx(typedTrx);
      // Locks the row for this attempt (still ours: the count matches) and bounds the session.
      // It waits for the lock rather than skipping: a concurrent claim statement that read the
      // row before our claim committed locks it for a moment while rechecking it (READ
      // COMMITTED), and skipping then would drop a healthy attempt until its lease ended.
      // Nothing holds the lock longer: a claim never takes a row that is locked.
      const locked = await sql<{ pid: number }>`
        SELECT pg_backend_pid() AS pid,
          set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true),
          set_config('idle_in_transaction_session_timeout', ${`${options.statementTimeoutMs}ms`}, true)
        FROM inbox_event
        WHERE event_id = ${row.event_id} AND attempts = ${row.attempts}
          AND NOT processed AND dead_at IS NULL
        FOR UPDATE
      `.execute(trx);
      const session = locked.rows[0];
      if (session === undefined) {
        metrics?.inboxAttemptsLostTotal.inc();
        logger.warn(
          {
            component: 'inbox-processor',
            eventId: row.event_id,
            eventType: row.event_type,
            attempts: row.attempts,
          },
          'inbox row was claimed again or finished while this attempt ran past its lease; this attempt is dropped',
        );
        return 'lost';
      }
      const guard = new AttemptGuard();
      try {
        await withTimeout(write(typedTrx.withPlugin(guard)), timeoutMs, async () => {
          guard.close();
          // Stops a query the handler has running, so the rollback need not wait for it.
          await sql`SELECT pg_cancel_backend(${session.pid})`.execute(db).catch(() => undefined);
        });
      } catch (error) {
        throw new HandlerFailed(error);
      } finally {
        guard.close();
      }
      await deps.hooks?.beforeMarkProcessed?.({
        eventId: row.event_id,
        eventType: row.event_type,
        partitionKey: row.partition_key,
      });
      await trx
        .updateTable('inbox_event')
        .set({ processed: true, processed_at: sql<Date>`now()` })
        .where('event_id', '=', row.event_id)
        .execute();
      return 'processed';
    });

  /** After the attempt's rollback: the error, and the next try after a backoff, or dead. */
  const recordFailure = async (row: InboxRow, reason: string, dead: boolean): Promise<void> => {
    const delaySeconds = backoffDelay(options.retryBackoff, row.attempts) / 1000;
    await db
      .updateTable('inbox_event')
      .set({
        last_error: reason,
        next_attempt_at: sql<Date>`now() + make_interval(secs => ${delaySeconds})`,
        dead_at: dead ? sql<Date>`now()` : null,
      })
      .where('event_id', '=', row.event_id)
      .where('attempts', '=', row.attempts)
      .where('processed', '=', false)
      .execute();
    if (dead) logDead(row, reason);
  };

  const logDead = (row: InboxRow, reason: string): void => {
    logger.error(
      {
        component: 'inbox-processor',
        eventId: row.event_id,
        eventType: row.event_type,
        key: row.partition_key,
        attempts: row.attempts,
        reason,
      },
      `inbox row marked dead; later events of key ${row.partition_key} wait for an operator (requeue or discard)`,
    );
  };

  const worker = async (n: number): Promise<void> => {
    const state = new StateLog(logger, { component: 'inbox-processor', worker: n });
    const progress = metrics?.stalls.reporter('inbox-processor', `worker ${n}`);
    while (running) {
      let outcome: Outcome;
      try {
        outcome = await processOne(progress);
        state.ok('inbox processor');
      } catch (error) {
        state.failed('inbox processor', error);
        progress?.failed(error);
        if (running) await stopping.wait(backoffDelay(options.backoff, state.failures));
        continue;
      }
      if (outcome === 'processed') {
        deps.relayNotifier?.notify();
        metrics?.inboxProcessedTotal.inc();
      }
      if (outcome === 'dead') metrics?.inboxDeadTotal.inc();
      // A row done either way is progress; a failed attempt is not.
      if (outcome === 'processed' || outcome === 'dead') progress?.progressed();
      // Idle workers sleep until a NOTIFY (new rows) or the poll (a retry coming due).
      if (outcome === 'idle' && running) await work.wait(options.pollIntervalMs);
    }
  };

  const done = Promise.all(Array.from({ length: options.concurrency }, (_, n) => worker(n)));
  logger.info(
    { component: 'inbox-processor', concurrency: options.concurrency },
    'inbox processor started',
  );
  return {
    async stop() {
      running = false;
      stopping.wake();
      for (let i = 0; i < options.concurrency; i++) work.wake();
      await done;
      await listener?.stop();
      await deps.relayNotifier?.idle();
      logger.info({ component: 'inbox-processor' }, 'inbox processor stopped');
    },
  };
}

function toInboxEvent(row: InboxRow): InboxEvent {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    partitionKey: row.partition_key,
    payload: row.payload,
    occurredAt: row.occurred_at,
    topic: row.topic,
    partition: row.kafka_partition,
    offset: row.kafka_offset,
    headers: row.headers,
    receivedAt: row.received_at,
    attempts: row.attempts - 1,
  };
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? `${describe(error)}` : String(error);
  return text.slice(0, 2000);
}
