import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OutboxTables } from '../schema/tables.ts';
import { outboxDb } from '../internal/views.ts';
import { DEFAULT_BACKLOG_CACHE_MS, registerBacklogGauges } from './backlog-gauges.ts';
import { DEFAULT_STALL_AFTER_MS, StallWatch } from './stall-watch.ts';
import {
  ConsumerLag,
  DEFAULT_CONSUMER_LAG_OPTIONS,
  type ConsumerLagOptions,
} from './consumer-lag.ts';

/** The counters and histograms the workers update; gauges are read from the database. */
export interface OutboxMetrics {
  readonly publishedTotal: Counter;
  readonly publishFailuresTotal: Counter;
  readonly publishRefusedTotal: Counter;
  readonly batchSize: Histogram;
  readonly batchDurationSeconds: Histogram;
  readonly inboxReceivedTotal: Counter;
  readonly inboxDuplicatesTotal: Counter;
  readonly inboxProcessedTotal: Counter;
  readonly inboxHandlerFailuresTotal: Counter;
  readonly inboxDeadTotal: Counter;
  readonly inboxAttemptsLostTotal: Counter;
  /**
   * NOTIFYs the relay's or processor's LISTEN connection received, by channel: flat while
   * rows flow, the wake-ups come from polling alone (a LISTEN behind a transaction pooler).
   */
  readonly notificationsHeardTotal: Counter<'channel'>;
  readonly parkedTotal: Counter<'consumer'>;
  readonly dedupAppliedTotal: Counter<'consumer'>;
  readonly dedupDuplicatesTotal: Counter<'consumer'>;
  /** Where workers report "has work" and "made progress"; read by `outbox_worker_stalled`. */
  readonly stalls: StallWatch;
  /** Groups whose Kafka lag `kafka_consumer_lag` reports; the consumers register themselves. */
  readonly consumerLag: ConsumerLag;
  /** What the CDC relay's watch reports of its connector and replication slot. */
  readonly cdc: {
    readonly connectorRunning: Gauge<'connector'>;
    readonly slotLagBytes: Gauge<'connector'>;
    readonly slotLagSeconds: Gauge<'connector'>;
  };
}

export interface OutboxMetricsOptions {
  /** Work waiting this long without progress is a stall (default 60 s). */
  readonly stallAfterMs?: number;
  /** Caching and timeout of the consumer lag read on scrape. */
  readonly consumerLag?: Partial<ConsumerLagOptions>;
  /**
   * A scrape within this long of the last backlog query answers from it (default 2000 ms): the
   * gauges cost one query every few seconds however often, and however many, scrapers ask.
   */
  readonly backlogCacheMs?: number;
  /**
   * Who publishes the outbox. With `cdc` nothing marks rows published, so the unpublished
   * gauges (`outbox_unpublished_events`, `outbox_oldest_unpublished_age_seconds`) would count
   * every row: they are not exported, and the CDC relay's slot lag tells the backlog instead.
   */
  readonly outboxPublishedBy?: 'relay' | 'cdc';
}

/**
 * Registers the library's metrics in `registry`, `outbox_worker_stalled{worker}` from the
 * stall watch the workers report to, and `kafka_consumer_lag{group,topic,partition}` of the
 * consumer groups that registered. With `db`, the backlog gauges (unpublished
 * count, age of the oldest unpublished row, rows held by the commit-order fence and the age of
 * the oldest, inbox backlog, age of the oldest unprocessed row, dead rows, parked messages) are
 * computed by one query, at most once per `backlogCacheMs`; a failed query keeps the last
 * values, so a scrape never fails because PostgreSQL is down.
 */
export function createOutboxMetrics<DB extends OutboxTables>(
  registry: Registry,
  db?: Kysely<DB>,
  options: OutboxMetricsOptions = {},
): OutboxMetrics {
  const stalls = new StallWatch({ stallAfterMs: options.stallAfterMs ?? DEFAULT_STALL_AFTER_MS });
  const consumerLag = new ConsumerLag(
    Object.freeze({ ...DEFAULT_CONSUMER_LAG_OPTIONS, ...options.consumerLag }),
  );
  const registers = [registry];
  const metrics: OutboxMetrics = {
    ...relayMetrics(registers),
    ...receiverMetrics(registers),
    stalls,
    consumerLag,
    cdc: cdcGauges(registers),
  };
  registerWorkerGauges(registers, consumerLag, stalls);
  if (db !== undefined) {
    registerBacklogGauges(
      registry,
      outboxDb(db),
      options.outboxPublishedBy ?? 'relay',
      options.backlogCacheMs ?? DEFAULT_BACKLOG_CACHE_MS,
    );
  }
  return metrics;
}

/** `kafka_consumer_lag` of the groups that registered, `outbox_worker_stalled` per worker. */
function registerWorkerGauges(
  registers: Registry[],
  consumerLag: ConsumerLag,
  stalls: StallWatch,
): void {
  new Gauge({
    name: 'kafka_consumer_lag',
    help: "Messages after the consumer group's committed offset (high watermark - committed), by partition",
    labelNames: ['group', 'topic', 'partition'],
    registers,
    async collect() {
      const rows = await consumerLag.read();
      this.reset();
      for (const row of rows) {
        this.set({ group: row.group, topic: row.topic, partition: String(row.partition) }, row.lag);
      }
    },
  });
  new Gauge({
    name: 'outbox_worker_stalled',
    help: 'Whether a worker has had work without progress for longer than its stall limit (1) or not (0)',
    labelNames: ['worker'],
    registers,
    collect() {
      this.reset();
      for (const worker of stalls.workers()) {
        this.set({ worker: worker.worker }, worker.stalled ? 1 : 0);
      }
    },
  });
}

const counter = <L extends string = never>(
  registers: Registry[],
  name: string,
  help: string,
  labelNames: L[] = [],
): Counter<L> => new Counter<L>({ name, help, labelNames, registers });

/** The relay's counters and histograms. */
function relayMetrics(registers: Registry[]) {
  return {
    publishedTotal: counter(
      registers,
      'outbox_published_total',
      'Events the relay published (Kafka acknowledged and published_at committed)',
    ),
    publishFailuresTotal: counter(
      registers,
      'outbox_publish_failures_total',
      'Relay batches rolled back (Kafka or PostgreSQL failure, timeout)',
    ),
    publishRefusedTotal: counter(
      registers,
      'outbox_publish_refused_total',
      'Outbox rows Kafka (or the relay before sending) refused: set aside, or tried again',
    ),
    batchSize: new Histogram({
      name: 'outbox_publish_batch_size',
      help: 'Events per published relay batch',
      buckets: [1, 5, 10, 50, 100, 250, 500, 1000, 2500],
      registers,
    }),
    batchDurationSeconds: new Histogram({
      name: 'outbox_publish_batch_duration_seconds',
      help: 'Claim + send + mark duration of a relay batch',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}

/** The inbox writer's, the processor's and the dedup consumer's counters. */
function receiverMetrics(registers: Registry[]) {
  return {
    inboxReceivedTotal: counter(
      registers,
      'inbox_received_total',
      'Events the inbox writer stored',
    ),
    inboxDuplicatesTotal: counter(
      registers,
      'inbox_duplicates_dropped_total',
      'Events the inbox writer dropped because their event_id was already stored',
    ),
    inboxProcessedTotal: counter(
      registers,
      'inbox_processed_total',
      'Inbox rows handled and marked processed',
    ),
    inboxHandlerFailuresTotal: counter(
      registers,
      'inbox_handler_failures_total',
      'Inbox handler attempts that failed (rolled back, retried later)',
    ),
    inboxDeadTotal: counter(
      registers,
      'inbox_dead_total',
      'Inbox rows marked dead after exhausting their attempts',
    ),
    inboxAttemptsLostTotal: counter(
      registers,
      'inbox_attempts_lost_total',
      'Inbox attempts dropped because their row was claimed again after its lease ended (a handler or process slower than the handler timeout)',
    ),
    notificationsHeardTotal: counter(
      registers,
      'outbox_listen_notifications_total',
      'NOTIFYs received on the LISTEN connection of a relay or inbox processor, by channel; flat while rows flow means wake-ups by polling alone',
      ['channel'],
    ),
    parkedTotal: counter(
      registers,
      'parked_messages_total',
      'Kafka messages parked (malformed or rejected) and skipped',
      ['consumer'],
    ),
    dedupAppliedTotal: counter(
      registers,
      'processed_event_applied_total',
      'Effects applied by the dedup consumer',
      ['consumer'],
    ),
    dedupDuplicatesTotal: counter(
      registers,
      'processed_event_duplicates_total',
      'Repeated deliveries the dedup consumer ignored',
      ['consumer'],
    ),
  };
}

/** What the CDC relay's watch reports of its connector and replication slot. */
function cdcGauges(registers: Registry[]): OutboxMetrics['cdc'] {
  const gauge = (name: string, help: string) =>
    new Gauge<'connector'>({ name, help, labelNames: ['connector'], registers });
  return {
    connectorRunning: gauge(
      'outbox_cdc_connector_running',
      'Whether the CDC relay connector and all its tasks run in Kafka Connect (1) or not (0)',
    ),
    slotLagBytes: gauge(
      'outbox_cdc_slot_lag_bytes',
      "WAL bytes the CDC relay's replication slot has not confirmed: PostgreSQL keeps them",
    ),
    slotLagSeconds: gauge(
      'outbox_cdc_slot_lag_seconds',
      "Seconds since the WAL stood where the CDC relay's slot has confirmed (0 when caught up)",
    ),
  };
}
