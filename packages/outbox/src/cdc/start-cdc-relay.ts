import type { BackoffOptions } from '../internal/backoff.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import { WorkerLoops } from '../internal/worker-loop.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { replicationName } from './cdc-connector-config.ts';
import type { CdcRelayDeps } from './cdc-relay.ts';
import { ConnectorWatch } from './connector-watch.ts';
import { SlotWatch } from './slot-watch.ts';

export interface CdcRelayWorkerDeps<DB extends OutboxTables> extends CdcRelayDeps<DB> {
  readonly metrics?: OutboxMetrics;
  readonly options?: {
    /** How often the connector and its slot are looked at (default 2 s). */
    readonly watchIntervalMs?: number;
    readonly backoff?: BackoffOptions;
  };
}

const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 500,
  maxMs: 15_000,
  multiplier: 2,
});

/**
 * The relay role in CDC mode. Kafka Connect publishes; this worker makes sure it does and shows
 * how well: it registers the connector (retrying while Kafka Connect or PostgreSQL is down, and
 * again if someone deleted it), restarts a failed task, and reports the connector's state and its
 * replication slot's lag in bytes and seconds (`outbox_cdc_*` metrics). A slot that has WAL to
 * confirm and confirms none for the stall limit makes the relay stalled, as a polling relay that
 * publishes nothing is.
 */
export async function startCdcRelay<DB extends OutboxTables>(
  deps: CdcRelayWorkerDeps<DB>,
): Promise<Worker> {
  const connector = deps.connector.name;
  const slot = replicationName(connector);
  const intervalMs = deps.options?.watchIntervalMs ?? 2000;
  const backoff = deps.options?.backoff ?? DEFAULT_BACKOFF;
  const progress = deps.metrics?.stalls.reporter('outbox-relay');
  const cdc = deps.metrics?.cdc;
  const db = outboxDb(deps.db);
  const slotWatch = new SlotWatch({ db, slot, connector, metrics: cdc, progress });
  const connectorWatch = new ConnectorWatch(deps, cdc);
  const loops = new WorkerLoops();

  // Two loops: the slot is PostgreSQL's to answer, the connector Kafka Connect's. A frozen or
  // unreachable Connect must not also hide the slot's lag, which is what shows it.
  const watch = { backoff, intervalMs } as const;
  loops.start({
    ...watch,
    what: 'CDC slot watch',
    state: new StateLog(deps.logger, { component: 'cdc-relay', connector, slot }),
    step: async () => {
      await slotWatch.look();
      return { next: 'rest' };
    },
    failed: (error) => progress?.failed(error),
  });
  loops.start({
    ...watch,
    what: 'CDC relay',
    state: new StateLog(deps.logger, { component: 'cdc-relay', connector }),
    step: async () => {
      await connectorWatch.look();
      return { next: 'rest' };
    },
    failed: (error) => {
      // Kafka Connect not answering (or refusing) is a connector we cannot see running.
      connectorWatch.unseen();
      progress?.failed(error);
    },
  });
  deps.logger.info({ component: 'cdc-relay', connector, slot }, 'CDC relay watch started');
  return {
    async stop() {
      await loops.stop();
      // The connector keeps publishing: it belongs to Kafka Connect, not to this process.
      deps.logger.info({ component: 'cdc-relay', connector }, 'CDC relay watch stopped');
    },
  };
}
