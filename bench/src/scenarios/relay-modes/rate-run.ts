import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { unpublishedLeft } from '../../backlog.ts';
import { measureCpu, serverGroups, type CpuUse } from '../../cpu.ts';
import { offerOrders, type OfferedLoadResult } from '../../load.ts';
import { clientViewOf, type ClientView } from '../latency/client-view.ts';
import { ORDER_TOPIC } from '../latency/latency-bench.ts';
import {
  walPosition,
  type RelayMode,
  type RelayModesBench,
  type RelaySystem,
} from './relay-modes-bench.ts';

/** One offered rate through one relay: latency to Kafka, and what each order cost to publish. */
export interface RateRun extends ClientView {
  readonly mode: RelayMode;
  readonly rate: number;
  readonly toKafkaMs: readonly number[];
  /** WAL PostgreSQL wrote per order, the relay's own writes (or none) included. */
  readonly walBytesPerOrder: number;
  /** CPU from the first request until every order was published. */
  readonly cpu: CpuUse;
}

/**
 * Until every order is on the topic and, with the polling relay, marked published: the
 * `published_at` update is part of what the polling relay costs.
 */
async function awaitPublished(bench: RelayModesBench, system: RelaySystem, ids: string[]) {
  await pollUntil(async () => (ids.every((id) => bench.appendedAt.has(id)) ? true : undefined), {
    timeoutMs: 300_000,
    description: `every order of the ${system.mode} run appended to ${ORDER_TOPIC}`,
  });
  if (system.mode === 'polling') {
    await pollUntil(async () => ((await unpublishedLeft(system.db)) ? undefined : true), {
      timeoutMs: 60_000,
      description: 'every outbox row marked published',
    });
  }
}

/** Milliseconds from each order's write transaction (orders.created_at) to Kafka's append. */
async function toKafkaMs(bench: RelayModesBench, system: RelaySystem, ids: readonly string[]) {
  const commits = await sql<{ id: string; ms: number }>`
    SELECT id::text AS id, extract(epoch FROM created_at)::float8 * 1000 AS ms
    FROM orders WHERE id = ANY(${ids}::uuid[])`.execute(system.db);
  return commits.rows.map((row) => (bench.appendedAt.get(row.id) ?? Number.NaN) - row.ms);
}

/** Offers `rate` orders per second for `seconds` (open loop) to the system's api. */
export async function rateRun(
  bench: RelayModesBench,
  system: RelaySystem,
  run: { readonly rate: number; readonly seconds: number },
): Promise<RateRun> {
  const walBefore = await walPosition(system.db);
  const groups = {
    api: system.api.pid(),
    ...system.publisherGroups(),
    ...serverGroups(bench.ctx.stack),
  };
  const { result: load, cpu } = await measureCpu(groups, async (): Promise<OfferedLoadResult> => {
    const offered = await offerOrders({ baseUrl: system.api.url, ...run });
    await awaitPublished(bench, system, [...offered.committed.keys()]);
    return offered;
  });
  const ids = [...load.committed.keys()];
  const walBytes = (await walPosition(system.db)) - walBefore;
  return {
    mode: system.mode,
    rate: run.rate,
    ...clientViewOf(load),
    toKafkaMs: await toKafkaMs(bench, system, ids),
    walBytesPerOrder: walBytes / Math.max(1, ids.length),
    cpu,
  };
}
