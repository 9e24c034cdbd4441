import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { measureCpu, serverGroups, type CpuUse } from '../../cpu.ts';
import { offerOrders } from '../../load.ts';
import type { RoleHandle } from '../../services.ts';
import { clientViewOf, type ClientView } from './client-view.ts';
import { ORDER_TOPIC, type LatencyBench, type WakeUp } from './latency-bench.ts';

/** One offered rate with one wake-up mode: what the clients saw and what the pipeline took. */
export interface LatencyRun extends ClientView {
  readonly rate: number;
  readonly wakeUp: WakeUp;
  readonly toKafkaMs: readonly number[];
  readonly toHandledMs: readonly number[];
  /** CPU while the load was offered, by process. */
  readonly cpu: CpuUse;
}

/** Waits until every order of the run is on the topic and handled by the processor. */
async function awaitPipeline(bench: LatencyBench, ids: readonly string[], label: string) {
  await pollUntil(async () => (ids.every((id) => bench.appendedAt.has(id)) ? true : undefined), {
    timeoutMs: 180_000,
    description: `every order of the ${label} run appended to ${ORDER_TOPIC}`,
  });
  bench.handledSoFar += ids.length;
  await pollUntil(
    async () => {
      const result = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM inbox_event WHERE processed`.execute(bench.payments);
      return (result.rows[0]?.n ?? 0) >= bench.handledSoFar ? true : undefined;
    },
    { timeoutMs: 300_000, description: `every order of the ${label} run handled` },
  );
}

/** Milliseconds from each order's commit to Kafka's append and to the processor handling it. */
async function latencies(bench: LatencyBench, ids: readonly string[]) {
  const handled = await sql<{ id: string; ms: number }>`
    SELECT payload->>'orderId' AS id, extract(epoch FROM processed_at)::float8 * 1000 AS ms
    FROM inbox_event WHERE payload->>'orderId' = ANY(${ids}::text[])`.execute(bench.payments);
  // "Commit", conservatively: the order's write transaction start (orders.created_at is
  // now()); the HTTP answer can arrive seconds after the commit on an overloaded machine.
  const commits = await sql<{ id: string; ms: number }>`
    SELECT id::text AS id, extract(epoch FROM created_at)::float8 * 1000 AS ms
    FROM orders WHERE id = ANY(${ids}::uuid[])`.execute(bench.orders);
  const committedAt = new Map(commits.rows.map((row) => [row.id, row.ms]));
  const commitOf = (id: string) => committedAt.get(id) ?? Number.NaN;
  return {
    toKafkaMs: ids.map((id) => (bench.appendedAt.get(id) ?? Number.NaN) - commitOf(id)),
    toHandledMs: handled.rows.map((row) => row.ms - commitOf(row.id)),
  };
}

/** Offers `rate` orders per second for `seconds` (open loop), then reads the latencies. */
export async function measureLatency(
  bench: LatencyBench,
  run: { rate: number; seconds: number; wakeUp: WakeUp; workers: readonly RoleHandle[] },
): Promise<LatencyRun> {
  const [relay, processor] = run.workers;
  const { result: load, cpu } = await measureCpu(
    {
      api: bench.api.pid(),
      relay: relay?.pid(),
      consumer: bench.inboxWriter.pid(),
      processor: processor?.pid(),
      ...serverGroups(bench.ctx.stack),
    },
    () => offerOrders({ baseUrl: bench.api.url, rate: run.rate, seconds: run.seconds }),
  );
  const ids = [...load.committed.keys()];
  await awaitPipeline(bench, ids, `${run.rate}/s ${run.wakeUp}`);
  return {
    rate: run.rate,
    wakeUp: run.wakeUp,
    ...clientViewOf(load),
    ...(await latencies(bench, ids)),
    cpu,
  };
}
