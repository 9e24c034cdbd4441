import type { ComponentStatus, Stack } from '@outbox-inbox/infra';
import { roleProcesses } from '../system/role-processes.ts';
import { readLatestOrders, type OrderWithJourney, type ReadRedeliveries } from './latest-orders.ts';
import { parsePrometheusText } from './prometheus-text.ts';
import { SystemPoints, type ScrapedProcess, type SystemPoint } from './system-point.ts';

/** What the page shows at one moment. */
export interface DashboardState {
  /** Who publishes the outboxes: the page charts the backlog, or the replication slots. */
  readonly relayMode: 'polling' | 'cdc';
  readonly components: readonly ComponentStatus[];
  /** Oldest first, covering the last `windowMs`. */
  readonly history: readonly SystemPoint[];
  readonly orders: readonly OrderWithJourney[];
  /** Why the orders shown may be old (order-api or a database not answering), or null. */
  readonly ordersError: string | null;
}

export interface SamplerOptions {
  /** The sampler reads only the components and their endpoints. */
  readonly stack: Pick<Stack, 'status'>;
  readonly orderApiUrl: string;
  /** The repeats each event absorbed, from the services' databases. */
  readonly redeliveries: ReadRedeliveries;
  readonly relayMode: 'polling' | 'cdc';
  /** How often while a page watches (`watched`), default 1 s. */
  readonly intervalMs?: number;
  /**
   * How often while no page watches, default 15 s: the charts still have points to show when a
   * page opens, and an idle system is not scraped every second for nobody.
   */
  readonly idleIntervalMs?: number;
  /** Whether a page is watching now; without it, always. */
  readonly watched?: () => boolean;
  readonly windowMs?: number;
  readonly orderCount?: number;
}

/**
 * Every `intervalMs` while a page watches (every `idleIntervalMs` otherwise): the stack's
 * components, the metrics of every running role process and the newest orders with the
 * repeats they absorbed; calls `onState` with the result. `wake()` samples at once (a page
 * just opened); `stop()` ends it.
 */
export function startSampler(
  options: SamplerOptions,
  onState: (state: DashboardState) => void,
): { stop(): Promise<void>; wake(): void } {
  const intervalMs = options.intervalMs ?? 1000;
  const idleIntervalMs = options.idleIntervalMs ?? 15_000;
  const watched = options.watched ?? (() => true);
  let wake: () => void = () => undefined;
  const windowMs = options.windowMs ?? 5 * 60_000;
  const points = new SystemPoints();
  const history: SystemPoint[] = [];
  let orders: OrderWithJourney[] = [];
  let ordersError: string | null = null;
  let stopped = false;
  let round: Promise<void> = Promise.resolve();

  // The newest orders are read only for a page: unlike the charts they keep no history, and
  // reading them costs the order api and both databases a query per order each round.
  const readOrders = () =>
    watched()
      ? readLatestOrders(options, options.orderCount ?? 8, intervalMs).then(
          (found) => ({ found, error: null }),
          (error: unknown) => ({ found: orders, error: messageOf(error) }),
        )
      : Promise.resolve({ found: orders, error: ordersError });
  const sample = async (): Promise<void> => {
    const components = options.stack.status();
    const [processes, latest] = await Promise.all([
      scrapeRoles(components, intervalMs),
      readOrders(),
    ]);
    orders = latest.found;
    ordersError = latest.error;
    const now = Date.now();
    history.push(points.next(now, processes));
    while (history.length > 0 && (history[0]?.at ?? now) < now - windowMs) history.shift();
    onState({ relayMode: options.relayMode, components, history, orders, ordersError });
  };
  const loop = async (): Promise<void> => {
    while (!stopped) {
      const started = Date.now();
      // A sampling round that fails (the stack's state file mid-rewrite) is skipped, not fatal.
      await sample().catch(() => undefined);
      const every = watched() ? intervalMs : idleIntervalMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, every - (Date.now() - started)));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };
  round = loop();
  return {
    async stop() {
      stopped = true;
      wake();
      await round;
    },
    wake: () => wake(),
  };
}

async function scrapeRoles(
  components: readonly ComponentStatus[],
  timeoutMs: number,
): Promise<ScrapedProcess[]> {
  const roles = roleProcesses();
  const scraped = await Promise.all(
    components.map(async (component): Promise<ScrapedProcess | undefined> => {
      const url = component.endpoints['metrics'];
      const role = roles.find(
        (r) => component.name === r.name || new RegExp(`^${r.name}-\\d+$`).test(component.name),
      );
      if (!component.running || url === undefined || role === undefined) return undefined;
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        if (!response.ok) return undefined;
        const samples = parsePrometheusText(await response.text());
        return { component: component.name, service: role.service.name, role: role.role, samples };
      } catch {
        return undefined;
      }
    }),
  );
  return scraped.filter((s) => s !== undefined);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
