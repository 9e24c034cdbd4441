import { pollUntil } from '@outbox-inbox/infra';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { sql, type Kysely } from 'kysely';
import { measureCpu, type CpuUse } from '../../cpu.ts';
import { offerOrders } from '../../load.ts';
import { percentile, sleep } from '../../stats.ts';
import type { CapacitySystem } from './capacity-system.ts';

/** What must hold at a rate for the system to carry it (the B7 conditions). */
export const capacityLimits = Object.freeze({ handledP99Ms: 1000, paidP99Ms: 2000 });

/** One offered rate held for a step: what the clients saw and what the pipeline did. */
export interface CapacityStep {
  readonly rate: number;
  readonly offeredRate: number;
  readonly accepted: number;
  /** Requests not answered 201: 5xx, refused connections, timeouts. */
  readonly errors: number;
  readonly handledP99Ms: number;
  readonly paidP99Ms: number;
  /** Orders the pipeline fell behind by over the step's second half (slope × duration). */
  readonly backlogGrowth: number;
  readonly cpu: CpuUse;
  /** Empty when the rate is carried; otherwise which condition failed. */
  readonly failed: readonly string[];
}

type Db = Kysely<OutboxTables>;

async function pendingOrders(orders: Db): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM orders WHERE status = 'PENDING'`.execute(orders);
  return result.rows[0]?.n ?? 0;
}

/** Samples the orders not yet through the pipeline (outbox, Kafka, inbox, back) every second. */
function sampleBacklog(orders: Db): { stop(): Promise<{ at: number; n: number }[]> } {
  const samples: { at: number; n: number }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      samples.push({ at: performance.now() / 1000, n: await pendingOrders(orders) });
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Least-squares slope of the second half (the first is the ramp-up), times its duration. */
function growthOverSecondHalf(samples: readonly { at: number; n: number }[]): number {
  const half = samples.slice(Math.floor(samples.length / 2));
  if (half.length < 2) return 0;
  const meanAt = half.reduce((s, p) => s + p.at, 0) / half.length;
  const meanN = half.reduce((s, p) => s + p.n, 0) / half.length;
  const covariance = half.reduce((s, p) => s + (p.at - meanAt) * (p.n - meanN), 0);
  const variance = half.reduce((s, p) => s + (p.at - meanAt) ** 2, 0);
  const span = (half.at(-1)?.at ?? 0) - (half[0]?.at ?? 0);
  return variance === 0 ? 0 : (covariance / variance) * span;
}

/** Commit → handled by payment-service, and commit → the order PAID (or declined), in ms. */
export async function latencies(
  system: Pick<CapacitySystem, 'orders' | 'payments'>,
  ids: readonly string[],
) {
  const commits = await sql<{ id: string; ms: number }>`
    SELECT id::text AS id, extract(epoch FROM created_at)::float8 * 1000 AS ms
    FROM orders WHERE id = ANY(${ids}::uuid[])`.execute(system.orders);
  const handled = await sql<{ id: string; ms: number }>`
    SELECT payload->>'orderId' AS id, extract(epoch FROM processed_at)::float8 * 1000 AS ms
    FROM inbox_event WHERE payload->>'orderId' = ANY(${ids}::text[])`.execute(system.payments);
  const paid = await sql<{ id: string; ms: number }>`
    SELECT order_id::text AS id, extract(epoch FROM min(recorded_at))::float8 * 1000 AS ms
    FROM order_history
    WHERE order_id = ANY(${ids}::uuid[]) AND event_type IN ('PaymentCompleted', 'PaymentFailed')
    GROUP BY order_id`.execute(system.orders);
  const committedAt = new Map(commits.rows.map((row) => [row.id, row.ms]));
  const since = (rows: { id: string; ms: number }[]) =>
    rows.map((row) => row.ms - (committedAt.get(row.id) ?? Number.NaN));
  return { handledMs: since(handled.rows), paidMs: since(paid.rows) };
}

/** `HTTP 503: 500, ECONNRESET: 2`: why requests failed, most frequent first. */
function reasons(failures: ReadonlyMap<string, number>): string {
  return [...failures]
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reason}: ${n}`)
    .join(', ');
}

/** Waits until every accepted order went through the whole pipeline (or the deadline). */
async function drained(system: CapacitySystem, timeoutMs: number): Promise<boolean> {
  return pollUntil(async () => ((await pendingOrders(system.orders)) === 0 ? true : undefined), {
    timeoutMs,
    description: 'every order of the step through the pipeline',
  }).then(
    () => true,
    () => false,
  );
}

/** Offers `rate` orders/s for `seconds` (open loop) and checks the B7 conditions. */
export async function measureStep(
  system: CapacitySystem,
  step: { readonly rate: number; readonly seconds: number; readonly drainTimeoutMs: number },
): Promise<CapacityStep & { readonly drained: boolean }> {
  const sampler = sampleBacklog(system.orders);
  const { result: load, cpu } = await measureCpu(system.cpuGroups(), () =>
    offerOrders({ baseUrl: system.apiUrl, rate: step.rate, seconds: step.seconds }),
  );
  const backlogGrowth = growthOverSecondHalf(await sampler.stop());
  const isDrained = await drained(system, step.drainTimeoutMs);
  const ids = [...load.committed.keys()];
  const { handledMs, paidMs } = await latencies(system, ids);
  const handledP99Ms = percentile(handledMs, 99);
  const paidP99Ms = percentile(paidMs, 99);
  const failed = [
    ...(load.failed > 0 ? [`${load.failed} requests failed (${reasons(load.failures)})`] : []),
    ...(!isDrained ? ['did not drain'] : []),
    ...(!(handledP99Ms <= capacityLimits.handledP99Ms) ? ['handled p99'] : []),
    ...(!(paidP99Ms <= capacityLimits.paidP99Ms) ? ['PAID p99'] : []),
    // Less than a quarter second of orders over the half step: noise, not a trend.
    ...(backlogGrowth > Math.max(25, step.rate / 4) ? ['backlog grew'] : []),
  ];
  return {
    rate: step.rate,
    offeredRate: load.offeredRate,
    accepted: ids.length,
    errors: load.failed,
    handledP99Ms,
    paidP99Ms,
    backlogGrowth,
    cpu,
    failed,
    drained: isDrained,
  };
}
