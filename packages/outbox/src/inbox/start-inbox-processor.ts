import type { Kysely } from 'kysely';
import type pg from 'pg';
import { backoffDelay } from '../internal/backoff.ts';
import { startListener } from '../internal/listener.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { ProgressReporter } from '../operations/stall-watch.ts';
import { INBOX_CHANNEL } from '../outbox/channels.ts';
import type { CommitNotifier } from '../outbox/commit-notifier.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { claimInboxRows, type InboxClaim, type InboxRow } from './claim-inbox-rows.ts';
import { giveBackAttempts, type CountedAttempt } from './give-back-attempts.ts';
import { handleClaimedRows, WriteNotStarted, type RowOutcome } from './handle-claimed-rows.ts';
import type { InboxHandler } from './inbox-handler.ts';
import {
  resolveInboxProcessorOptions,
  type InboxProcessorHooks,
  type InboxProcessorOptions,
} from './inbox-options.ts';

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
   * Wakes the relays after each claim's commit, for handlers that enqueue with `notify: false`
   * (see `createOutboxNotifier`); without it, such handlers' events wait for the relays' poll.
   */
  readonly relayNotifier?: CommitNotifier;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: InboxProcessorHooks;
}

/**
 * Handles inbox rows: per partition key one at a time and oldest first. A worker claims the
 * heads of up to `batchSize` keys; each attempt is first counted in that claim, a statement of
 * its own, then each row's handler writes and its `processed` mark commit together (see
 * handleClaimedRows). A handler that throws or outlives `handlerTimeoutMs` is rolled back; the
 * row gets a backoff, and is marked dead (with its error) after `maxAttempts`. Because the
 * count comes first, a handler that hangs or takes its process down uses up attempts too, and
 * its row goes dead instead of being retried first in line for ever.
 *
 * An attempt whose write transaction never began (no pooled connection within the pool's
 * timeout, PostgreSQL slow) is given back: an infrastructure hiccup must not walk rows to dead.
 */
export function startInboxProcessor<DB extends OutboxTables>(deps: InboxProcessorDeps<DB>): Worker {
  const options = resolveInboxProcessorOptions(deps.options);
  const { logger, metrics } = deps;
  const db = outboxDb(deps.db);
  const work = new Wakeup();
  const stopping = new Wakeup();
  let running = true;
  // NOTIFYs heard so far: a worker that heard one while it handled its rows claims again,
  // since the new row may be a later row of a key it held (no idle worker could claim that).
  let notices = 0;

  const listener =
    options.notify && deps.listen
      ? startListener({
          config: deps.listen,
          channel: INBOX_CHANNEL,
          logger,
          backoff: options.backoff,
          // Wakes one idle worker; a claim that left due rows wakes the next (below). Waking
          // them all sent every worker's claim after the same head: 7.8 claims per row in B7.
          onNotify: () => {
            notices++;
            work.wakeOne();
          },
          onHeard: () => metrics?.notificationsHeardTotal.inc({ channel: INBOX_CHANNEL }),
        })
      : undefined;

  // Attempts whose write transaction never began, by event id: the claim counted them, then the
  // pool had no connection for the write within its timeout (or BEGIN failed), so no handler
  // wrote anything. They are given back by the next claim, on the connection it holds anyway.
  // Taking the write's connection before the claim and keeping it to the commit would close
  // the gap for plain handlers, but a calling handler's `call` runs between claim and write
  // and must hold no connection (see CallingInboxHandler; payment-service runs more workers
  // than its pool has connections for that reason), so the gap stays and is compensated.
  // The count still does its job: a handler that hangs or fails, a `call` that fails, or a
  // process that dies before giving back keeps its attempt counted.
  const owed = new Map<string, number>();

  const claim = async (): Promise<InboxClaim> => {
    const claimOptions = {
      limit: options.batchSize,
      maxAttempts: options.maxAttempts,
      leaseMs: options.handlerTimeoutMs,
    };
    if (owed.size === 0) return claimInboxRows(db, claimOptions);
    const giving: CountedAttempt[] = [...owed].map(([eventId, attempts]) => ({
      eventId,
      attempts,
    }));
    owed.clear();
    let given = false;
    try {
      return await db.connection().execute(async (connection) => {
        await giveBackAttempts(connection, giving);
        given = true;
        return claimInboxRows(connection, claimOptions);
      });
    } catch (error) {
      if (!given) owe(giving);
      throw error;
    }
  };

  const owe = (attempts: readonly CountedAttempt[]): void => {
    for (const { eventId, attempts: count } of attempts) {
      // A later claim's count of the row replaces an older one.
      if ((owed.get(eventId) ?? 0) <= count) owed.set(eventId, count);
    }
  };

  /**
   * One claim and its rows' attempts. True when another claim may find work now: the claim
   * left due rows, or one of its keys goes on, or a NOTIFY came in meanwhile. False sends the
   * worker to wait for a NOTIFY or the poll, so a row on its own costs one claim, not three.
   */
  const processClaim = async (progress: ProgressReporter | undefined): Promise<boolean> => {
    const heard = notices;
    const { rows, headsLeft, keysContinue } = await claim();
    progress?.hasWork(rows.length > 0);
    if (rows.length === 0) return false;
    // The next idle worker takes what this claim left while this one handles its rows.
    if (headsLeft) work.wakeOne();
    const again = headsLeft || keysContinue;
    // A row the claim gave up on is dead already: nothing left to run or to write.
    const open: InboxRow[] = [];
    for (const row of rows) {
      if (row.gave_up) {
        report(row, { kind: 'dead', reason: 'its attempts never finished' }, progress);
      } else {
        open.push(row);
      }
    }
    if (open.length === 0) return true;
    let handled: Awaited<ReturnType<typeof handleClaimedRows>>;
    try {
      handled = await handleClaimedRows(
        { db: deps.db, handlers: deps.handlers, hooks: deps.hooks, options },
        open,
      );
    } catch (error) {
      if (error instanceof WriteNotStarted) {
        owe(error.untried.map((row) => ({ eventId: row.event_id, attempts: row.attempts })));
      }
      throw error;
    }
    for (const { row, outcome } of handled) report(row, outcome, progress);
    if (handled.some(({ outcome }) => outcome.kind === 'processed')) deps.relayNotifier?.notify();
    return again || notices !== heard;
  };

  const report = (row: InboxRow, outcome: RowOutcome, progress?: ProgressReporter): void => {
    const fields = {
      component: 'inbox-processor',
      eventId: row.event_id,
      eventType: row.event_type,
      attempts: row.attempts,
    };
    switch (outcome.kind) {
      case 'processed':
        metrics?.inboxProcessedTotal.inc();
        progress?.progressed();
        return;
      case 'lost':
        metrics?.inboxAttemptsLostTotal.inc();
        logger.warn(
          fields,
          'inbox row was claimed again or finished while this attempt ran past its lease; this attempt is dropped',
        );
        return;
      case 'failed':
        metrics?.inboxHandlerFailuresTotal.inc();
        progress?.failed(outcome.cause);
        logger.warn(
          { ...fields, err: outcome.cause },
          `inbox handler failed (attempt ${row.attempts} of ${options.maxAttempts}); will retry`,
        );
        return;
      case 'dead':
        if (outcome.cause !== undefined) {
          metrics?.inboxHandlerFailuresTotal.inc();
          progress?.failed(outcome.cause);
        }
        metrics?.inboxDeadTotal.inc();
        progress?.progressed();
        logger.error(
          { ...fields, key: row.partition_key, reason: outcome.reason },
          `inbox row marked dead; later events of key ${row.partition_key} wait for an operator (requeue or discard)`,
        );
    }
  };

  const worker = async (n: number): Promise<void> => {
    const state = new StateLog(logger, { component: 'inbox-processor', worker: n });
    const progress = metrics?.stalls.reporter('inbox-processor', `worker ${n}`);
    while (running) {
      let claimAgain: boolean;
      try {
        claimAgain = await processClaim(progress);
        state.ok('inbox processor');
      } catch (error) {
        state.failed('inbox processor', error);
        progress?.failed(error);
        if (running) await stopping.wait(backoffDelay(options.backoff, state.failures));
        continue;
      }
      // Otherwise sleep until a NOTIFY (new rows) or the poll (a retry coming due).
      if (!claimAgain && running) await work.wait(options.pollIntervalMs);
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
      // What no later claim gave back; if PostgreSQL still does not answer, the attempts stay
      // counted, as those of a process that dies.
      await giveBackAttempts(
        db,
        [...owed].map(([eventId, attempts]) => ({ eventId, attempts })),
      ).catch((error: unknown) =>
        logger.warn(
          { component: 'inbox-processor', err: error },
          'could not give back attempts whose write never began; they stay counted',
        ),
      );
      await listener?.stop();
      await deps.relayNotifier?.idle();
      logger.info({ component: 'inbox-processor' }, 'inbox processor stopped');
    },
  };
}
