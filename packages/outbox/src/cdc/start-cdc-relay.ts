import { sql } from 'kysely';
import { backoffDelay, type BackoffOptions } from '../internal/backoff.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import { replicationName } from './cdc-connector-config.ts';
import { configureCdcRelay, type CdcRelayDeps } from './cdc-relay.ts';
import { ConnectApi, connectorFailure, isConnectorRunning } from './connect-api.ts';
import { lsnBytes, WalTimeline } from './wal-position.ts';

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

/** How long a connector may be unknown to Connect after its config was written. */
const REGISTRATION_GRACE_MS = 10_000;

interface SlotState {
  readonly current: string;
  readonly confirmed: string | null;
}

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
  const db = outboxDb(deps.db);
  const connector = deps.connector.name;
  const slot = replicationName(connector);
  const api = new ConnectApi(deps.connectUrl);
  const intervalMs = deps.options?.watchIntervalMs ?? 2000;
  const backoff = deps.options?.backoff ?? DEFAULT_BACKOFF;
  const state = new StateLog(deps.logger, { component: 'cdc-relay', connector });
  const slotState = new StateLog(deps.logger, { component: 'cdc-relay', connector, slot });
  const progress = deps.metrics?.stalls.reporter('outbox-relay');
  const cdc = deps.metrics?.cdc;
  const timeline = new WalTimeline();
  const stopping = new Wakeup();
  let running = true;
  let registeredAt: number | undefined;
  let lastConfirmed: bigint | undefined;

  const watchSlot = async (): Promise<void> => {
    const { rows } = await sql<SlotState>`
      SELECT pg_current_wal_lsn()::text AS current, confirmed_flush_lsn::text AS confirmed
      FROM pg_replication_slots WHERE slot_name = ${slot}
    `.execute(db);
    const found = rows[0];
    if (found === undefined || found.confirmed === null) return;
    const now = Date.now();
    const current = lsnBytes(found.current);
    const confirmed = lsnBytes(found.confirmed);
    timeline.sample(now, current);
    const lagBytes = current > confirmed ? current - confirmed : 0n;
    cdc?.slotLagBytes.set({ connector }, Number(lagBytes));
    cdc?.slotLagSeconds.set({ connector }, timeline.secondsBehind(confirmed, now));
    progress?.hasWork(lagBytes > 0n);
    if (lastConfirmed !== undefined && confirmed > lastConfirmed) progress?.progressed();
    lastConfirmed = confirmed;
  };

  const watchConnector = async (): Promise<void> => {
    if (registeredAt === undefined) {
      await configureCdcRelay(deps);
      registeredAt = Date.now();
    }
    const status = await api.status(connector);
    if (status === undefined) {
      cdc?.connectorRunning.set({ connector }, 0);
      // Connect answers 404 for a moment after the config is written.
      if (Date.now() - registeredAt < REGISTRATION_GRACE_MS) return;
      // Deleted behind our back: register it again on the next look.
      registeredAt = undefined;
      throw new Error(`connector ${connector} is not registered in Kafka Connect`);
    }
    const up = isConnectorRunning(status);
    cdc?.connectorRunning.set({ connector }, up ? 1 : 0);
    if (connectorFailure(status) !== undefined) {
      await api.restartFailed(connector);
      throw new Error(`connector ${connector} had a failed task; restarted it`);
    }
  };

  // Two loops: the slot is PostgreSQL's to answer, the connector Kafka Connect's. A frozen or
  // unreachable Connect must not also hide the slot's lag, which is what shows it.
  // A stop may come while a loop is not waiting (wake() ends only current waits).
  const rest = (ms: number) => (running ? stopping.wait(ms) : Promise.resolve());
  const slotLoop = async (): Promise<void> => {
    while (running) {
      try {
        await watchSlot();
        slotState.ok('CDC slot watch');
        await rest(intervalMs);
      } catch (error) {
        slotState.failed('CDC slot watch', error);
        progress?.failed(error);
        await rest(backoffDelay(backoff, slotState.failures));
      }
    }
  };
  const connectorLoop = async (): Promise<void> => {
    while (running) {
      try {
        await watchConnector();
        state.ok('CDC relay');
        await rest(intervalMs);
      } catch (error) {
        // Kafka Connect not answering (or refusing) is a connector we cannot see running.
        cdc?.connectorRunning.set({ connector }, 0);
        state.failed('CDC relay', error);
        progress?.failed(error);
        await rest(backoffDelay(backoff, state.failures));
      }
    }
  };
  const done = Promise.all([slotLoop(), connectorLoop()]);
  deps.logger.info({ component: 'cdc-relay', connector, slot }, 'CDC relay watch started');
  return {
    async stop() {
      running = false;
      stopping.wake();
      await done;
      // The connector keeps publishing: it belongs to Kafka Connect, not to this process.
      deps.logger.info({ component: 'cdc-relay', connector }, 'CDC relay watch stopped');
    },
  };
}
