import { sql, type Kysely } from 'kysely';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { OutboxTables } from '../schema/tables.ts';
import { outboxDb } from '../internal/views.ts';
import { heldByFence } from '../relay/commit-order-fence.ts';
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

interface Snapshot {
  unpublished: number;
  oldestUnpublishedAge: number;
  fenceHeld: number;
  oldestFenceHeldAge: number;
  inboxBacklog: number;
  oldestUnprocessedAge: number;
  inboxDead: number;
  parked: number;
  outboxFailed: number;
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
    publishedTotal: new Counter({
      name: 'outbox_published_total',
      help: 'Events the relay published (Kafka acknowledged and published_at committed)',
      registers,
    }),
    publishFailuresTotal: new Counter({
      name: 'outbox_publish_failures_total',
      help: 'Relay batches rolled back (Kafka or PostgreSQL failure, timeout)',
      registers,
    }),
    publishRefusedTotal: new Counter({
      name: 'outbox_publish_refused_total',
      help: 'Outbox rows Kafka (or the relay before sending) refused: set aside, or tried again',
      registers,
    }),
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
    inboxReceivedTotal: new Counter({
      name: 'inbox_received_total',
      help: 'Events the inbox writer stored',
      registers,
    }),
    inboxDuplicatesTotal: new Counter({
      name: 'inbox_duplicates_dropped_total',
      help: 'Events the inbox writer dropped because their event_id was already stored',
      registers,
    }),
    inboxProcessedTotal: new Counter({
      name: 'inbox_processed_total',
      help: 'Inbox rows handled and marked processed',
      registers,
    }),
    inboxHandlerFailuresTotal: new Counter({
      name: 'inbox_handler_failures_total',
      help: 'Inbox handler attempts that failed (rolled back, retried later)',
      registers,
    }),
    inboxDeadTotal: new Counter({
      name: 'inbox_dead_total',
      help: 'Inbox rows marked dead after exhausting their attempts',
      registers,
    }),
    inboxAttemptsLostTotal: new Counter({
      name: 'inbox_attempts_lost_total',
      help: 'Inbox attempts dropped because their row was claimed again after its lease ended (a handler or process slower than the handler timeout)',
      registers,
    }),
    notificationsHeardTotal: new Counter({
      name: 'outbox_listen_notifications_total',
      help: 'NOTIFYs received on the LISTEN connection of a relay or inbox processor, by channel; flat while rows flow means wake-ups by polling alone',
      labelNames: ['channel'],
      registers,
    }),
    parkedTotal: new Counter({
      name: 'parked_messages_total',
      help: 'Kafka messages parked (malformed or rejected) and skipped',
      labelNames: ['consumer'],
      registers,
    }),
    dedupAppliedTotal: new Counter({
      name: 'processed_event_applied_total',
      help: 'Effects applied by the dedup consumer',
      labelNames: ['consumer'],
      registers,
    }),
    dedupDuplicatesTotal: new Counter({
      name: 'processed_event_duplicates_total',
      help: 'Repeated deliveries the dedup consumer ignored',
      labelNames: ['consumer'],
      registers,
    }),
    stalls,
    consumerLag,
    cdc: {
      connectorRunning: new Gauge({
        name: 'outbox_cdc_connector_running',
        help: 'Whether the CDC relay connector and all its tasks run in Kafka Connect (1) or not (0)',
        labelNames: ['connector'],
        registers,
      }),
      slotLagBytes: new Gauge({
        name: 'outbox_cdc_slot_lag_bytes',
        help: "WAL bytes the CDC relay's replication slot has not confirmed: PostgreSQL keeps them",
        labelNames: ['connector'],
        registers,
      }),
      slotLagSeconds: new Gauge({
        name: 'outbox_cdc_slot_lag_seconds',
        help: "Seconds since the WAL stood where the CDC relay's slot has confirmed (0 when caught up)",
        labelNames: ['connector'],
        registers,
      }),
    },
  };
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

/** Longest a scrape waits for the backlog query before it answers with the last values. */
const SNAPSHOT_TIMEOUT_MS = 2000;

const DEFAULT_BACKLOG_CACHE_MS = 2000;

function registerBacklogGauges(
  registry: Registry,
  db: Kysely<OutboxTables>,
  publishedBy: 'relay' | 'cdc',
  cacheMs: number,
): void {
  let last: Snapshot = {
    unpublished: 0,
    oldestUnpublishedAge: 0,
    fenceHeld: 0,
    oldestFenceHeldAge: 0,
    inboxBacklog: 0,
    oldestUnprocessedAge: 0,
    inboxDead: 0,
    parked: 0,
    outboxFailed: 0,
  };
  let readAt = Number.NEGATIVE_INFINITY;
  // One query serves every gauge of a scrape, concurrent scrapes, and every scrape within
  // `cacheMs` of it.
  let pending: Promise<Snapshot> | undefined;
  const read = async (): Promise<Snapshot> => {
    if (Date.now() - readAt < cacheMs) return last;
    pending ??= readSnapshot(db, publishedBy)
      .then((snapshot) => {
        readAt = Date.now();
        return (last = snapshot);
      })
      .catch(() => last)
      .finally(() => (pending = undefined));
    // A query stuck behind a lock must not hang the scrape: answer with the last values.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Snapshot>((resolve) => {
      timer = setTimeout(() => resolve(last), SNAPSHOT_TIMEOUT_MS);
    });
    try {
      return await Promise.race([pending, late]);
    } finally {
      clearTimeout(timer);
    }
  };
  const gauge = (name: string, help: string, pick: (s: Snapshot) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(pick(await read()));
      },
    });
  };
  if (publishedBy === 'relay') {
    gauge('outbox_unpublished_events', 'Outbox rows not yet published', (s) => s.unpublished);
    gauge(
      'outbox_oldest_unpublished_age_seconds',
      'Age of the oldest unpublished outbox row (0 when none)',
      (s) => s.oldestUnpublishedAge,
    );
    gauge(
      'outbox_fence_held_events',
      'Committed outbox rows the commit-order fence holds back for an older outbox writer still open',
      (s) => s.fenceHeld,
    );
    gauge(
      'outbox_fence_held_oldest_age_seconds',
      'Age of the oldest outbox row the commit-order fence holds back (0 when none)',
      (s) => s.oldestFenceHeldAge,
    );
  }
  gauge(
    'inbox_backlog_events',
    'Inbox rows waiting to be processed (not dead)',
    (s) => s.inboxBacklog,
  );
  gauge(
    'inbox_oldest_unprocessed_age_seconds',
    'Age of the oldest inbox row waiting to be processed (0 when none)',
    (s) => s.oldestUnprocessedAge,
  );
  gauge('inbox_dead_events', 'Inbox rows marked dead, waiting for an operator', (s) => s.inboxDead);
  gauge('parked_messages', 'Parked Kafka messages in parked_message', (s) => s.parked);
  gauge(
    'outbox_failed_events',
    'Outbox rows set aside as FAILED, holding back their keys until retried or skipped',
    (s) => s.outboxFailed,
  );
}

async function readSnapshot(
  db: Kysely<OutboxTables>,
  publishedBy: 'relay' | 'cdc',
): Promise<Snapshot> {
  // In CDC mode every row is "unpublished": counting them would scan the whole table.
  const unpublished =
    publishedBy === 'relay'
      ? sql`(SELECT count(*) FROM outbox_event WHERE published_at IS NULL)`
      : sql`0`;
  const oldestUnpublished =
    publishedBy === 'relay'
      ? sql`(SELECT extract(epoch FROM now() - min(created_at))::float8
           FROM outbox_event WHERE published_at IS NULL)`
      : sql`NULL::float8`;
  // One pass over the unpublished rows, with the fence (one pg_locks read) computed once.
  const fenceHeld =
    publishedBy === 'relay'
      ? sql`(SELECT count(*) AS held, extract(epoch FROM now() - min(created_at))::float8 AS oldest
           FROM outbox_event e
           WHERE e.published_at IS NULL AND e.failed_at IS NULL AND ${heldByFence('e')})`
      : sql`(SELECT 0 AS held, NULL::float8 AS oldest)`;
  const result = await sql<{
    unpublished: string;
    oldest_unpublished_age: number | null;
    fence_held: string;
    oldest_fence_held_age: number | null;
    inbox_backlog: string;
    oldest_unprocessed_age: number | null;
    inbox_dead: string;
    parked: string;
    outbox_failed: string;
  }>`
    SELECT
      ${unpublished} AS unpublished,
      ${oldestUnpublished} AS oldest_unpublished_age,
      fence.held AS fence_held,
      fence.oldest AS oldest_fence_held_age,
      (SELECT count(*) FROM inbox_event WHERE NOT processed AND dead_at IS NULL) AS inbox_backlog,
      (SELECT extract(epoch FROM now() - min(received_at))::float8
         FROM inbox_event WHERE NOT processed AND dead_at IS NULL) AS oldest_unprocessed_age,
      (SELECT count(*) FROM inbox_event WHERE NOT processed AND dead_at IS NOT NULL) AS inbox_dead,
      (SELECT count(*) FROM parked_message) AS parked,
      (SELECT count(*) FROM outbox_event
         WHERE failed_at IS NOT NULL AND published_at IS NULL) AS outbox_failed
    FROM ${fenceHeld} AS fence
  `.execute(db);
  const row = result.rows[0];
  if (row === undefined) throw new Error('metrics query returned no row');
  return {
    unpublished: Number(row.unpublished),
    oldestUnpublishedAge: row.oldest_unpublished_age ?? 0,
    fenceHeld: Number(row.fence_held),
    oldestFenceHeldAge: row.oldest_fence_held_age ?? 0,
    inboxBacklog: Number(row.inbox_backlog),
    oldestUnprocessedAge: row.oldest_unprocessed_age ?? 0,
    inboxDead: Number(row.inbox_dead),
    parked: Number(row.parked),
    outboxFailed: Number(row.outbox_failed),
  };
}
