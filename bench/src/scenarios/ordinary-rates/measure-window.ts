import type { BenchContext } from '../../context.ts';
import { measureCpu, type CpuUse } from '../../cpu.ts';
import { offerOrders } from '../../load.ts';
import { readKafkaRequests, requestsSince } from '../../role-system/kafka-requests.ts';
import type { RequestCounts } from '../../role-system/kafka-requests.ts';
import { readCounts, resetCounts, type LoginCounts } from '../../role-system/server-counts.ts';
import {
  systemRoles,
  untilNothingPending,
  type RoleSystem,
} from '../../role-system/start-role-system.ts';
import { sleep } from '../../stats.ts';
import { latencies } from '../capacity/measure-step.ts';
import { startPostgresCpuMeter, type PostgresCpu } from './postgres-processes.ts';
import { privateMemory } from './private-memory.ts';

/** One measured window of B9: the system idle (`rate` 0) or at a constant offered rate. */
export interface Window {
  readonly rate: number;
  /** Orders accepted (201) and requests that failed. */
  readonly orders: number;
  readonly failed: number;
  /** CPU while the load was offered (or the system sat idle), by process group. */
  readonly cpu: CpuUse;
  /** PostgreSQL's share of `cpu`, by process: each role's sessions, the WAL writer, autovacuum. */
  readonly postgresByProcess: PostgresCpu;
  /** Private memory of each process group at the window's end, bytes. */
  readonly privateBytes: Readonly<Record<string, number>>;
  /** Statements per role login, the drain after the load included. */
  readonly statements: readonly LoginCounts[];
  /** Kafka requests per role (in the order of `statements`), by API. */
  readonly kafka: readonly RequestCounts[];
  /** Commit → the order PAID (or declined), ms, of every accepted order. */
  readonly paidMs: readonly number[];
}

/**
 * Offers `rate` orders/s for `seconds` (open loop), or leaves the system idle that long, and
 * counts what it cost: CPU and private memory per process, statements per role (by its login)
 * and Kafka requests per role (by its own counter). Reading the counters happens outside the
 * CPU window.
 */
export async function measureWindow(
  ctx: BenchContext,
  system: RoleSystem,
  step: { readonly rate: number; readonly seconds: number },
): Promise<Window> {
  const kafkaBefore = await Promise.all(system.roles.map((r) => readKafkaRequests(r.url)));
  const walBefore = await resetCounts(ctx.stack);
  const postmaster = ctx.stack.pid('postgres');
  const postgresMeter =
    postmaster === undefined ? undefined : await startPostgresCpuMeter(ctx.stack, postmaster);
  const { result: load, cpu } = await measureCpu(system.cpuGroups(), async () =>
    step.rate > 0
      ? offerOrders({ baseUrl: system.apiUrl, rate: step.rate, seconds: step.seconds })
      : sleep(step.seconds * 1000).then(() => undefined),
  );
  const postgresByProcess = (await postgresMeter?.stop()) ?? {};
  const privateBytes = privateMemory(system.cpuGroups());
  if (load !== undefined) {
    await untilNothingPending(system.orders, `every B9 order of ${step.rate}/s through`);
  }
  const counted = await readCounts(
    ctx.stack,
    systemRoles.map((r) => r.name),
    walBefore,
  );
  const kafkaAfter = await Promise.all(system.roles.map((r) => readKafkaRequests(r.url)));
  const ids = load === undefined ? [] : [...load.committed.keys()];
  const { paidMs } = ids.length > 0 ? await latencies(system, ids) : { paidMs: [] };
  return {
    rate: step.rate,
    orders: ids.length,
    failed: load?.failed ?? 0,
    cpu,
    postgresByProcess,
    privateBytes,
    statements: counted.logins,
    kafka: kafkaAfter.map((after, i) => requestsSince(kafkaBefore[i] ?? new Map(), after)),
    paidMs,
  };
}
