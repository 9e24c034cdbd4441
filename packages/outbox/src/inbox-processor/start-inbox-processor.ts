import type { Kysely } from 'kysely';
import type pg from 'pg';
import { listenWhenAsked } from '../internal/listener.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import { WorkerLoops } from '../internal/worker-loop.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import { INBOX_CHANNEL } from '../enqueue/channels.ts';
import type { CommitNotifier } from '../enqueue/commit-notifier.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { InboxHandler } from './inbox-handler.ts';
import { OwedAttempts } from './owed-attempts.ts';
import { processClaim } from './process-claim.ts';
import {
  resolveInboxProcessorOptions,
  type InboxProcessorHooks,
  type InboxProcessorOptions,
} from './processor-options.ts';

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
  // The workers claim from the same rows: one of them polls per interval, not each.
  const loops = new WorkerLoops({ pollOneEveryMs: options.pollIntervalMs });
  const owed = new OwedAttempts(outboxDb(deps.db));
  // NOTIFYs heard so far: see processClaim.
  let notices = 0;
  // Wakes one idle worker; a claim that left due rows wakes the next. Waking them all sent
  // every worker's claim after the same head.
  const listener = listenWhenAsked(deps, options, INBOX_CHANNEL, () => {
    notices++;
    loops.wakeOne();
  });

  const { db, handlers, hooks, relayNotifier } = deps;
  for (let n = 0; n < options.concurrency; n++) {
    const progress = metrics?.stalls.reporter('inbox-processor', `worker ${n}`);
    const report = { logger, metrics, progress, maxAttempts: options.maxAttempts };
    const rows = { db, handlers, hooks, options };
    const worker = { rows, owed, loops, report, relayNotifier, notices: () => notices };
    loops.start({
      what: 'inbox processor',
      state: new StateLog(logger, { component: 'inbox-processor', worker: n }),
      step: () => processClaim(worker),
      failed: (error) => progress?.failed(error),
      backoff: options.backoff,
      intervalMs: options.pollIntervalMs,
    });
  }
  logger.info(
    { component: 'inbox-processor', concurrency: options.concurrency },
    'inbox processor started',
  );
  return {
    async stop() {
      await loops.stop();
      await owed.giveBackAll(logger);
      await listener?.stop();
      await relayNotifier?.idle();
      logger.info({ component: 'inbox-processor' }, 'inbox processor stopped');
    },
  };
}
