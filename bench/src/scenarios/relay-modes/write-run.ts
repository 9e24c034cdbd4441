import { pollUntil } from '@outbox-inbox/infra';
import autocannon from 'autocannon';
import { unpublishedLeft } from '../../backlog.ts';
import { measureCpu, serverGroups, type CpuUse } from '../../cpu.ts';
import { topicRecordCount } from '../../kafka.ts';
import { ORDER_TOPIC } from '../latency/latency-bench.ts';
import {
  walPosition,
  type RelayMode,
  type RelayModesBench,
  type RelaySystem,
} from './relay-modes-bench.ts';

/** `POST /orders` as fast as the api takes them while its relay publishes them. */
export interface WriteRun {
  readonly mode: RelayMode;
  readonly rps: number;
  readonly p99: number;
  readonly errors: number;
  readonly orders: number;
  readonly walBytesPerOrder: number;
  /** CPU from the first request until every order was published. */
  readonly cpu: CpuUse;
}

async function awaitPublished(
  bench: RelayModesBench,
  system: RelaySystem,
  expected: number,
): Promise<void> {
  await pollUntil(
    async () => ((await topicRecordCount(bench.admin, ORDER_TOPIC)) >= expected ? true : undefined),
    { timeoutMs: 300_000, description: `${system.mode}: ${expected} events on ${ORDER_TOPIC}` },
  );
  if (system.mode === 'polling') {
    await pollUntil(async () => ((await unpublishedLeft(system.db)) ? undefined : true), {
      timeoutMs: 60_000,
      description: 'every outbox row marked published',
    });
  }
}

/**
 * autocannon (closed loop, the bench's connections) for `seconds`, then until its relay has
 * published every accepted order: the write path's cost with each relay's work on the same
 * database, per order.
 */
export async function writeRun(
  bench: RelayModesBench,
  system: RelaySystem,
  seconds: number,
): Promise<WriteRun> {
  const { ctx } = bench;
  const onTopic = await topicRecordCount(bench.admin, ORDER_TOPIC);
  const walBefore = await walPosition(system.db);
  const groups = {
    api: system.api.pid(),
    ...system.publisherGroups(),
    ...serverGroups(ctx.stack),
  };
  const { result, cpu } = await measureCpu(groups, async () => {
    const load = await autocannon({
      url: `${system.api.url}/orders`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'customer-42', amount: 4200, currency: 'EUR' }),
      connections: ctx.settings.writeConnections,
      duration: seconds,
    });
    await awaitPublished(bench, system, onTopic + load['2xx']);
    return load;
  });
  const orders = result['2xx'];
  return {
    mode: system.mode,
    rps: orders / result.duration,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    orders,
    walBytesPerOrder: ((await walPosition(system.db)) - walBefore) / Math.max(1, orders),
    cpu,
  };
}
