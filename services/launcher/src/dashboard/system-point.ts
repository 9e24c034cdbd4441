import { CounterDeltas } from './counter-deltas.ts';
import { sumOf, type Sample } from './prometheus-text.ts';

/** What one service's database says, read from any of its processes (they all export it). */
export interface ServiceBacklog {
  readonly unpublished: number;
  readonly oldestUnpublishedAgeSeconds: number;
  readonly failedOutboxRows: number;
  readonly inboxBacklog: number;
  readonly deadInboxRows: number;
  readonly parkedMessages: number;
}

/**
 * What a service's CDC relay reports of its connector and replication slot (`RELAY_MODE=cdc`):
 * there the slot's lag takes the place of the outbox backlog, which is not exported.
 */
export interface ReplicationSlot {
  /** WAL bytes the slot has not confirmed. */
  readonly lagBytes: number;
  /** Seconds since the WAL stood where the slot has confirmed. */
  readonly lagSeconds: number;
  /** Whether Kafka Connect runs the connector and all its tasks. */
  readonly connectorRunning: boolean;
}

/** The system at one moment: one point of every chart. */
export interface SystemPoint {
  readonly at: number;
  readonly ordersAcceptedPerSecond: number;
  /** By service name; a service none of whose processes answered is absent. */
  readonly services: Readonly<Record<string, ServiceBacklog>>;
  /**
   * By service name, from its relay's `outbox_cdc_*` gauges; empty with the polling relay, and
   * a service whose relay did not answer (or has not looked at its slot yet) is absent.
   */
  readonly replicationSlots: Readonly<Record<string, ReplicationSlot>>;
  /** Summed over partitions, by consumer group. */
  readonly consumerLag: Readonly<Record<string, number>>;
  /** Duplicates the inbox writers and the dedup consumers dropped since the page's server started. */
  readonly duplicatesDropped: number;
  /** Workers reporting a stall, as `component/worker`. */
  readonly stalledWorkers: readonly string[];
}

/** The metrics of one process that answered a scrape. */
export interface ScrapedProcess {
  readonly component: string;
  readonly service: string;
  readonly role: string;
  readonly samples: readonly Sample[];
}

/**
 * Folds one round of scrapes into a point. The database gauges are the same in every process
 * of a service, so a service takes the largest value any of its processes reported (not the
 * sum); counters are per process and add up.
 */
export class SystemPoints {
  readonly #deltas = new CounterDeltas();
  #duplicatesDropped = 0;
  #lastAt: number | undefined;

  next(at: number, processes: readonly ScrapedProcess[]): SystemPoint {
    const seconds = this.#lastAt === undefined ? 0 : (at - this.#lastAt) / 1000;
    this.#lastAt = at;
    let accepted = 0;
    const services: Record<string, ServiceBacklog> = {};
    const replicationSlots: Record<string, ReplicationSlot> = {};
    const lagByPartition = new Map<string, { group: string; lag: number }>();
    const stalledWorkers: string[] = [];
    for (const process of processes) {
      const { samples, component } = process;
      if (process.role === 'api') {
        const created = sumOf(samples, 'http_requests_total', {
          method: 'POST',
          route: '/orders',
          status: '201',
        });
        accepted += this.#deltas.step(`${component}/orders`, created);
      }
      const duplicates =
        sumOf(samples, 'inbox_duplicates_dropped_total') +
        sumOf(samples, 'processed_event_duplicates_total');
      this.#duplicatesDropped += this.#deltas.step(`${component}/duplicates`, duplicates);
      services[process.service] = largest(services[process.service], backlogOf(samples));
      const slot = slotOf(samples);
      if (slot !== undefined) {
        replicationSlots[process.service] = furthestBehind(replicationSlots[process.service], slot);
      }
      for (const s of samples) {
        if (s.name === 'kafka_consumer_lag') {
          const key = `${s.labels['group']}/${s.labels['topic']}/${s.labels['partition']}`;
          const group = s.labels['group'] ?? '?';
          const lag = Math.max(lagByPartition.get(key)?.lag ?? 0, s.value);
          lagByPartition.set(key, { group, lag });
        }
        if (s.name === 'outbox_worker_stalled' && s.value > 0) {
          stalledWorkers.push(`${component}/${s.labels['worker'] ?? '?'}`);
        }
      }
    }
    const consumerLag: Record<string, number> = {};
    for (const { group, lag } of lagByPartition.values()) {
      consumerLag[group] = (consumerLag[group] ?? 0) + lag;
    }
    return {
      at,
      ordersAcceptedPerSecond: seconds > 0 ? accepted / seconds : 0,
      services,
      replicationSlots,
      consumerLag,
      duplicatesDropped: this.#duplicatesDropped,
      stalledWorkers,
    };
  }
}

function backlogOf(samples: readonly Sample[]): ServiceBacklog {
  return {
    unpublished: sumOf(samples, 'outbox_unpublished_events'),
    oldestUnpublishedAgeSeconds: sumOf(samples, 'outbox_oldest_unpublished_age_seconds'),
    failedOutboxRows: sumOf(samples, 'outbox_failed_events'),
    inboxBacklog: sumOf(samples, 'inbox_backlog_events'),
    deadInboxRows: sumOf(samples, 'inbox_dead_events'),
    parkedMessages: sumOf(samples, 'parked_messages'),
  };
}

function largest(a: ServiceBacklog | undefined, b: ServiceBacklog): ServiceBacklog {
  if (a === undefined) return b;
  return {
    unpublished: Math.max(a.unpublished, b.unpublished),
    oldestUnpublishedAgeSeconds: Math.max(
      a.oldestUnpublishedAgeSeconds,
      b.oldestUnpublishedAgeSeconds,
    ),
    failedOutboxRows: Math.max(a.failedOutboxRows, b.failedOutboxRows),
    inboxBacklog: Math.max(a.inboxBacklog, b.inboxBacklog),
    deadInboxRows: Math.max(a.deadInboxRows, b.deadInboxRows),
    parkedMessages: Math.max(a.parkedMessages, b.parkedMessages),
  };
}

/** The slot as the relay process reports it; undefined when it exports no `outbox_cdc_*` gauge. */
function slotOf(samples: readonly Sample[]): ReplicationSlot | undefined {
  const cdc = samples.filter((s) => s.name.startsWith('outbox_cdc_'));
  if (cdc.length === 0) return undefined;
  const largestOf = (name: string) =>
    Math.max(0, ...cdc.filter((s) => s.name === name).map((s) => s.value));
  const running = cdc.filter((s) => s.name === 'outbox_cdc_connector_running');
  return {
    lagBytes: largestOf('outbox_cdc_slot_lag_bytes'),
    lagSeconds: largestOf('outbox_cdc_slot_lag_seconds'),
    // Not reported is not known to run: the page must not show a connector up it cannot see.
    connectorRunning: running.length > 0 && running.every((s) => s.value > 0),
  };
}

/** Two reports of one service's slot (two relay instances, or connectors): the worse of each. */
function furthestBehind(a: ReplicationSlot | undefined, b: ReplicationSlot): ReplicationSlot {
  if (a === undefined) return b;
  return {
    lagBytes: Math.max(a.lagBytes, b.lagBytes),
    lagSeconds: Math.max(a.lagSeconds, b.lagSeconds),
    connectorRunning: a.connectorRunning && b.connectorRunning,
  };
}
