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

/** The system at one moment: one point of every chart. */
export interface SystemPoint {
  readonly at: number;
  readonly ordersAcceptedPerSecond: number;
  /** By service name; a service none of whose processes answered is absent. */
  readonly services: Readonly<Record<string, ServiceBacklog>>;
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
