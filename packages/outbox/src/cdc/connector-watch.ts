import type { OutboxMetrics } from '../ops/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { configureCdcRelay, type CdcRelayDeps } from './cdc-relay.ts';
import { ConnectApi, connectorFailure, isConnectorRunning } from './connect-api.ts';

/** How long a connector may be unknown to Connect after its config was written. */
const REGISTRATION_GRACE_MS = 10_000;

/**
 * The connector, as Kafka Connect sees it: registered (again, if someone deleted it), its
 * failed task restarted, its state in `outbox_cdc_connector_running`.
 */
export class ConnectorWatch<DB extends OutboxTables> {
  readonly #deps: CdcRelayDeps<DB>;
  readonly #api: ConnectApi;
  readonly #metrics: OutboxMetrics['cdc'] | undefined;
  #registeredAt: number | undefined;

  constructor(deps: CdcRelayDeps<DB>, metrics: OutboxMetrics['cdc'] | undefined) {
    this.#deps = deps;
    this.#api = new ConnectApi(deps.connectUrl);
    this.#metrics = metrics;
  }

  /** What a failed look means: a connector we cannot see running. */
  unseen(): void {
    this.#metrics?.connectorRunning.set({ connector: this.#deps.connector.name }, 0);
  }

  async look(): Promise<void> {
    const connector = this.#deps.connector.name;
    if (this.#registeredAt === undefined) {
      await configureCdcRelay(this.#deps);
      this.#registeredAt = Date.now();
    }
    const status = await this.#api.status(connector);
    if (status === undefined) {
      this.unseen();
      // Connect answers 404 for a moment after the config is written.
      if (Date.now() - this.#registeredAt < REGISTRATION_GRACE_MS) return;
      // Deleted behind our back: register it again on the next look.
      this.#registeredAt = undefined;
      throw new Error(`connector ${connector} is not registered in Kafka Connect`);
    }
    this.#metrics?.connectorRunning.set({ connector }, isConnectorRunning(status) ? 1 : 0);
    if (connectorFailure(status) !== undefined) {
      await this.#api.restartFailed(connector);
      throw new Error(`connector ${connector} had a failed task; restarted it`);
    }
  }
}
