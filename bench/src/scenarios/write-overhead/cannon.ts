import autocannon from 'autocannon';
import type { BenchContext } from '../../context.ts';
import { measureCpu, serverGroups, type CpuUse } from '../../cpu.ts';
import type { RoleHandle } from '../../services.ts';

export const writeVariants = ['with outbox', 'without outbox'] as const;
export type WriteVariant = (typeof writeVariants)[number];

export interface WriteRun {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly requests: number;
  readonly cpu: CpuUse;
}

/** autocannon against an api's `POST /orders` for `seconds`, with the CPU it cost. */
export async function cannon(
  ctx: BenchContext,
  api: RoleHandle | undefined,
  seconds: number,
): Promise<WriteRun> {
  const { result, cpu } = await measureCpu({ api: api?.pid(), ...serverGroups(ctx.stack) }, () =>
    autocannon({
      url: `${api?.url}/orders`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'customer-42', amount: 4200, currency: 'EUR' }),
      connections: ctx.settings.writeConnections,
      duration: seconds,
    }),
  );
  return {
    requests: result['2xx'],
    cpu,
    rps: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}
