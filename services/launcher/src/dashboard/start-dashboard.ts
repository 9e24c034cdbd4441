import type { Stack } from '@outbox-inbox/infra';
import { buildDashboardApp } from './dashboard-app.ts';
import { openRedeliveryReader } from './event-redeliveries.ts';
import { LoadGenerator } from './load-generator.ts';
import { startSampler, type DashboardState } from './system-sampler.ts';

export interface DashboardOptions {
  readonly stack: Stack;
  /** order-service's api: where the load goes and the latest orders come from. */
  readonly orderApiUrl: string;
  /**
   * The services' databases, where each event's dedup row counts the repeats it absorbed
   * (payment-service's inbox for the order events, order-service's processed_event for the
   * payment events).
   */
  readonly databaseUrls: readonly string[];
  /**
   * Who publishes the outboxes (default `polling`): the launcher, which set `RELAY_MODE` for
   * every role, says so rather than the page guessing from the metrics. The `outbox_cdc_*`
   * gauges come from the relay processes alone, so a killed relay (the very scene the page is
   * for) or one that has not looked at its slot yet would flip a guess back to the backlog
   * charts, which have no data in CDC mode, and hide that no one watches the slot.
   */
  readonly relayMode?: 'polling' | 'cdc';
  /** 0 picks a free one. */
  readonly port: number;
  /** How often an open page gets a new state (default 1 s). */
  readonly intervalMs?: number;
  /** How often the system is sampled while no page is open (default 15 s). */
  readonly idleIntervalMs?: number;
}

export interface RunningDashboard {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * The live dashboard of a running system, on 127.0.0.1 only: components with kill/start,
 * charts from the roles' /metrics, the newest orders with their journeys and the duplicates
 * each absorbed, an order load.
 */
export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  const load = new LoadGenerator(options.orderApiUrl);
  const listeners = new Set<(state: DashboardState) => void>();
  let latest: DashboardState | undefined;
  const intervalMs = options.intervalMs ?? 1000;
  const redeliveries = openRedeliveryReader(options.databaseUrls, intervalMs);
  const sampler = startSampler(
    {
      stack: options.stack,
      orderApiUrl: options.orderApiUrl,
      redeliveries: redeliveries.read,
      relayMode: options.relayMode ?? 'polling',
      intervalMs,
      ...(options.idleIntervalMs === undefined ? {} : { idleIntervalMs: options.idleIntervalMs }),
      watched: () => listeners.size > 0,
    },
    (state) => {
      latest = state;
      for (const listener of listeners) listener(state);
    },
  );
  const app = buildDashboardApp({
    stack: options.stack,
    load,
    state: () => latest,
    subscribe(listener) {
      listeners.add(listener);
      // The first page after a quiet spell gets a fresh state now, not at the idle pace.
      if (listeners.size === 1) sampler.wake();
      return () => listeners.delete(listener);
    },
  });
  await app.listen({ host: '127.0.0.1', port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await load.close();
      await sampler.stop();
      await redeliveries.close();
      // Open event streams would hold close() forever.
      app.server.closeAllConnections();
      await app.close();
    },
  };
}
