import { sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { backoffDelay } from '../internal/backoff.ts';
import { startListener } from '../internal/listener.ts';
import { describe, StateLog } from '../internal/state-log.ts';
import { outboxTrx } from '../internal/views.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import { INBOX_CHANNEL } from '../outbox/channels.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { claimInboxRow, type InboxRow } from './claim-inbox-row.ts';
import type { InboxEvent } from './inbox-event.ts';
import { resolveInboxProcessorOptions, type InboxProcessorOptions } from './inbox-options.ts';

export type InboxHandler<DB> = (trx: Transaction<DB>, event: InboxEvent) => Promise<void>;

export interface InboxProcessorDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  /** By event type. A type without a handler is marked dead with a clear reason. */
  readonly handlers: Readonly<Record<string, InboxHandler<DB>>>;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  /** Dedicated connection for LISTEN (wake on the writer's NOTIFY); without it, poll only. */
  readonly listen?: pg.ClientConfig;
  readonly options?: Partial<InboxProcessorOptions>;
}

type Outcome = 'idle' | 'processed' | 'failed' | 'dead';

/**
 * Handles inbox rows: per partition key one at a time and oldest first, each in its own
 * transaction with the handler's writes and the `processed` mark. A failing handler is rolled
 * back to a savepoint; the row gets `attempts + 1` and a backoff, and is marked dead (with its
 * error) after `maxAttempts`. A crash mid-handler rolls everything back: the row is retried.
 */
export function startInboxProcessor<DB extends OutboxTables>(deps: InboxProcessorDeps<DB>): Worker {
  const options = resolveInboxProcessorOptions(deps.options);
  const { logger, metrics } = deps;
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
          // Wakes every idle worker: each claims a different key or goes back to sleep.
          onNotify: () => work.wake(),
        })
      : undefined;

  const processOne = async (): Promise<Outcome> =>
    deps.db.transaction().execute(async (typedTrx) => {
      const trx = outboxTrx(typedTrx);
      await sql`SELECT
          set_config('statement_timeout', ${`${options.statementTimeoutMs}ms`}, true),
          set_config('idle_in_transaction_session_timeout', ${`${options.statementTimeoutMs}ms`}, true)
      `.execute(trx);
      const row = await claimInboxRow(trx);
      if (row === undefined) return 'idle';
      const handler = deps.handlers[row.event_type];
      if (handler === undefined) {
        await markDead(trx, row, `no handler for event type "${row.event_type}"`);
        return 'dead';
      }
      await sql`SAVEPOINT inbox_handler`.execute(trx);
      try {
        await handler(typedTrx, toInboxEvent(row));
        await sql`RELEASE SAVEPOINT inbox_handler`.execute(trx);
      } catch (error) {
        // The handler's writes are undone; the row's bookkeeping commits.
        await sql`ROLLBACK TO SAVEPOINT inbox_handler`.execute(trx);
        metrics?.inboxHandlerFailuresTotal.inc();
        const attempts = row.attempts + 1;
        const message = describeError(error);
        if (attempts >= options.maxAttempts) {
          await markDead(trx, row, message);
          return 'dead';
        }
        await trx
          .updateTable('inbox_event')
          .set({
            attempts,
            last_error: message,
            next_attempt_at: sql<Date>`now() + make_interval(secs => ${backoffDelay(options.retryBackoff, attempts) / 1000})`,
          })
          .where('event_id', '=', row.event_id)
          .execute();
        logger.warn(
          {
            component: 'inbox-processor',
            eventId: row.event_id,
            eventType: row.event_type,
            attempts,
            err: error,
          },
          `inbox handler failed (attempt ${attempts} of ${options.maxAttempts}); will retry`,
        );
        return 'failed';
      }
      await trx
        .updateTable('inbox_event')
        .set({ processed: true, processed_at: sql<Date>`now()`, attempts: row.attempts + 1 })
        .where('event_id', '=', row.event_id)
        .execute();
      return 'processed';
    });

  const markDead = async (
    trx: Transaction<OutboxTables>,
    row: InboxRow,
    reason: string,
  ): Promise<void> => {
    await trx
      .updateTable('inbox_event')
      .set({ attempts: row.attempts + 1, last_error: reason, dead_at: sql<Date>`now()` })
      .where('event_id', '=', row.event_id)
      .execute();
    logger.error(
      {
        component: 'inbox-processor',
        eventId: row.event_id,
        eventType: row.event_type,
        key: row.partition_key,
        reason,
      },
      `inbox row marked dead; later events of key ${row.partition_key} wait for an operator (requeue or discard)`,
    );
  };

  const worker = async (n: number): Promise<void> => {
    const state = new StateLog(logger, { component: 'inbox-processor', worker: n });
    while (running) {
      let outcome: Outcome;
      try {
        outcome = await processOne();
        state.ok('inbox processor');
      } catch (error) {
        state.failed('inbox processor', error);
        if (running) await stopping.wait(backoffDelay(options.backoff, state.failures));
        continue;
      }
      if (outcome === 'processed') metrics?.inboxProcessedTotal.inc();
      if (outcome === 'dead') metrics?.inboxDeadTotal.inc();
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
    attempts: row.attempts,
  };
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? `${describe(error)}` : String(error);
  return text.slice(0, 2000);
}
