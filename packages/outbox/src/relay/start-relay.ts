import type { Kysely } from 'kysely';
import type pg from 'pg';
import { backoffDelay } from '../internal/backoff.ts';
import type { EventProducer, KafkaClient } from '../kafka-port/kafka-client.ts';
import { startListener } from '../internal/listener.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import { OUTBOX_CHANNEL } from '../outbox/channels.ts';
import { hasUnpublishedEvents } from '../outbox/has-unpublished-events.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { OutboxError } from '../errors.ts';
import { oldestHeldByFenceMs } from './commit-order-fence.ts';
import { publishBatch, type BatchResult } from './publish-batch.ts';
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
  const work = new Wakeup();
  const stopping = new Wakeup();
  let running = true;
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

  const listener =
    options.notify && deps.listen
      ? startListener({
          config: deps.listen,
          channel: OUTBOX_CHANNEL,
          logger,
          backoff: options.backoff,
          onNotify: () => work.wake(),
          onHeard: () => deps.metrics?.notificationsHeardTotal.inc({ channel: OUTBOX_CHANNEL }),
        })
      : undefined;
  if (options.notify && !deps.listen) {
    logger.info({ component: 'outbox-relay' }, 'no LISTEN connection given: polling only');
  }

  /**
   * One claim-send-mark loop with its own producer. Several lanes behave like several
   * relays (the claim keeps keys disjoint), so one lane's database work overlaps another's
   * wait for Kafka.
   */
  const lane = async (n: number): Promise<void> => {
    const state = new StateLog(logger, { component: 'outbox-relay', lane: n });
    let producer: EventProducer | undefined;
    const connectedProducer = async (): Promise<EventProducer> => {
      if (producer) return producer;
      const created = deps.kafka.createProducer(options);
      try {
        await created.connect();
      } catch (error) {
        await created.disconnect().catch(() => undefined);
        throw error;
      }
      producer = created;
      return created;
    };
    // After a failed send the producer may be mid-retry or fenced; a fresh one (new producer
    // id) is the simple known state. Not after refusals Kafka answered: see EventProducer.send.
    const dropProducer = async (): Promise<void> => {
      const old = producer;
      producer = undefined;
      await old?.disconnect().catch(() => undefined);
    };
    /** Logs (once per state change) and backs off; a failed send also gets a new producer. */
    const failed = async (error: unknown, sendFailed: boolean): Promise<void> => {
      state.failed('outbox relay', error);
      progress?.failed(error);
      probeWork();
      if (sendFailed) {
        deps.metrics?.publishFailuresTotal.inc();
        await dropProducer();
      }
      if (running) await stopping.wait(backoffDelay(options.backoff, state.failures));
    };
    try {
      while (running) {
        let result: BatchResult;
        try {
          result = await publishBatch({
            db,
            producer: await connectedProducer(),
            options,
            metrics: deps.metrics,
          });
          if (result.published > 0) progress?.progressed();
          else probeWork();
        } catch (error) {
          await failed(error, true);
          continue;
        }
        for (const event of result.failed) {
          logger.warn(
            { component: 'outbox-relay', lane: n, ...event },
            'outbox event set aside as FAILED; later events of its key wait until it is retried or skipped',
          );
        }
        if (result.interruption !== undefined) {
          // What Kafka answered is committed; the rest is tried again after a pause.
          await failed(result.interruption, true);
          continue;
        }
        if (result.retrying > 0) {
          // Refused rows that may pass later (unknown topic...): pace the tries, keep the
          // producer (its sequence numbers are in step with the broker's).
          await failed(
            new OutboxError(
              'PUBLISH_REFUSED',
              `Kafka refused ${result.retrying} event(s); trying again`,
            ),
            false,
          );
          continue;
        }
        state.ok('outbox relay');
        if (!result.full) probeFence();
        if (!running || result.full) continue;
        // Caught up: the claim took every row it could. Wait for a NOTIFY (one received
        // mid-batch is remembered by `work`) or the poll, after a partial batch first letting
        // commits gather for lingerMs. Rows the fence held back need no claim of their own:
        // the writer they wait for NOTIFYs at its commit, and the poll covers writers that
        // do not notify. Claiming again at once would cost each batch of one an empty claim.
        if (result.claimed > 0) await stopping.wait(options.lingerMs);
        if (running) await work.wait(options.pollIntervalMs);
      }
    } finally {
      await dropProducer();
    }
  };

  logger.info(
    {
      component: 'outbox-relay',
      batchSize: options.batchSize,
      lanes: options.lanes,
      notify: listener !== undefined,
    },
    'outbox relay started',
  );
  const done = Promise.all(Array.from({ length: options.lanes }, (_, n) => lane(n)));

  return {
    async stop() {
      running = false;
      work.wake();
      stopping.wake();
      // The batch in flight either commits (Kafka acked) or rolls back; never in between.
      await done;
      await listener?.stop();
      logger.info({ component: 'outbox-relay' }, 'outbox relay stopped');
    },
  };
}
