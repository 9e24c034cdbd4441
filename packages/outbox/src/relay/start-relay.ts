import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { KafkaClient } from '../kafka-port/kafka-client.ts';
import { listenWhenAsked } from '../internal/listener.ts';
import { outboxDb } from '../internal/views.ts';
import { WorkerLoops } from '../internal/worker-loop.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import { OUTBOX_CHANNEL } from '../enqueue/channels.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { oldestHeldByFenceMs } from './commit-order-fence.ts';
import { hasUnpublishedEvents } from './has-unpublished-events.ts';
import { startRelayLane } from './relay-lane.ts';
import { resolveRelayOptions, type RelayOptions } from './relay-options.ts';

export interface RelayDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  /** The relay creates its own producers from it (ordered, idempotent, acks -1). */
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  /** Dedicated connection for LISTEN (reconnected after a restart); without it, poll only. */
  readonly listen?: pg.ClientConfig;
  readonly options?: Partial<RelayOptions>;
}

/**
 * Starts the relay and returns at once: Kafka or PostgreSQL being down (now or later) is
 * retried inside with capped, jittered backoff and logged once per state change.
 */
export async function startRelay<DB extends OutboxTables>(deps: RelayDeps<DB>): Promise<Worker> {
  const options = resolveRelayOptions(deps.options);
  const db = outboxDb(deps.db);
  const logger = deps.logger;
  const loops = new WorkerLoops();
  // Stalled: unpublished rows exist and no batch was published for a while (all lanes).
  const progress = deps.metrics?.stalls.reporter('outbox-relay');
  const probeWork = (): void => progress?.checkWork(() => hasUnpublishedEvents(db));
  // Rows the commit-order fence holds are not the relay's work: they wait for a writer
  // transaction still open. Stalled when the oldest has waited `fenceStallMs`.
  const fenceHold = deps.metrics?.stalls.reporter(
    'outbox-relay',
    'rows held by the commit-order fence',
    options.fenceStallMs,
  );
  const probeFence = (): void => fenceHold?.checkWork(() => oldestHeldByFenceMs(db));

  let notices = 0;
  const listener = listenWhenAsked(deps, options, OUTBOX_CHANNEL, () => {
    notices++;
    loops.wake();
  });
  if (options.notify && !deps.listen) {
    logger.info({ component: 'outbox-relay' }, 'no LISTEN connection given: polling only');
  }

  const { kafka, metrics } = deps;
  const relay = {
    ...{ db, kafka, logger, metrics, options, loops, progress, probeWork, probeFence },
    notices: () => notices,
  };
  for (let lane = 0; lane < options.lanes; lane++) startRelayLane(relay, lane);
  logger.info(
    {
      component: 'outbox-relay',
      batchSize: options.batchSize,
      lanes: options.lanes,
      notify: listener !== undefined,
    },
    'outbox relay started',
  );

  return {
    async stop() {
      // The batch in flight either commits (Kafka acked) or rolls back; never in between.
      await loops.stop();
      await listener?.stop();
      logger.info({ component: 'outbox-relay' }, 'outbox relay stopped');
    },
  };
}
