import autocannon from 'autocannon';
import type { BenchContext } from '../context.ts';
import { cpuTable, measureCpu, serverGroups, type CpuUse } from '../cpu.ts';
import type { Section } from '../report.ts';
import { migrateService, startRole, type RoleHandle } from '../services.ts';
import { fixed, int, showSpread, spread } from '../stats.ts';
import { writeBreakdown } from './write-breakdown.ts';

interface WriteRun {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly requests: number;
  readonly cpu: CpuUse;
}

/**
 * B4, the price of atomicity: `POST /orders` on order-service's api process, as shipped
 * (order row + outbox row + NOTIFY in one transaction), against the same process started with
 * the benchmark-only `BENCHMARK_SKIP_OUTBOX=true` (order row only). Same code path otherwise:
 * fastify, validation, pool, serialisation. Each variant has its own database; runs alternate
 * (ABBA…) with autocannon in the bench process. No relay runs: its cost is B1's subject.
 */
export async function writeOverhead(ctx: BenchContext): Promise<Section> {
  const { settings, stack } = ctx;
  const variants = ['with outbox', 'without outbox'] as const;
  type Variant = (typeof variants)[number];
  const apis = new Map<Variant, RoleHandle>();
  for (const variant of variants) {
    const skip = variant === 'without outbox';
    const url = await stack.createDatabase(skip ? 'bench_write_plain' : 'bench_write_outbox');
    migrateService('order', url);
    const api = await startRole(stack, {
      component: skip ? 'b4-api-without-outbox' : 'b4-api-with-outbox',
      service: 'order',
      role: 'api',
      databaseUrl: url,
      env: { BENCHMARK_SKIP_OUTBOX: skip ? 'true' : 'false' },
    });
    apis.set(variant, api);
  }

  const cannon = async (variant: Variant, seconds: number): Promise<WriteRun> => {
    const api = apis.get(variant);
    const { result, cpu } = await measureCpu({ api: api?.pid(), ...serverGroups(stack) }, () =>
      autocannon({
        url: `${api?.url}/orders`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: 'customer-42', amount: 4200, currency: 'EUR' }),
        connections: settings.writeConnections,
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
  };

  try {
    ctx.log('B4 warm-up');
    for (const variant of variants) await cannon(variant, Math.min(2, settings.writeSeconds));
    const runs = new Map<Variant, WriteRun[]>(variants.map((v) => [v, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const run = await cannon(variant, settings.writeSeconds);
        runs.get(variant)?.push(run);
        ctx.log(`B4 round ${round + 1} ${variant}: ${int(run.rps)} orders/s, p99 ${run.p99} ms`);
      }
    }
    const withRuns = runs.get('with outbox') ?? [];
    const withoutRuns = runs.get('without outbox') ?? [];
    // Overhead per round: throughput lost to the outbox insert, relative to the plain write.
    const overhead = spread(
      withRuns.map((w, i) => 1 - w.rps / (withoutRuns[i]?.rps ?? Number.NaN)),
    );
    const pct = (v: number) => `${fixed(v * 100, 1)} %`;
    ctx.log('B4 breakdown without HTTP');
    const breakdown = await writeBreakdown(ctx);
    return {
      id: 'B4',
      title: 'The price of atomicity: POST /orders with and without the outbox insert',
      tables: [
        {
          headers: [
            'variant',
            'orders/s median (min–max)',
            'p50 ms (runs)',
            'p99 ms (runs)',
            'errors',
            'runs (orders/s)',
          ],
          rows: variants.map((variant) => {
            const list = runs.get(variant) ?? [];
            return [
              variant,
              showSpread(spread(list.map((r) => r.rps))),
              list.map((r) => String(r.p50)).join(', '),
              list.map((r) => String(r.p99)).join(', '),
              String(list.reduce((sum, r) => sum + r.errors, 0)),
              list.map((r) => int(r.rps)).join(', '),
            ];
          }),
        },
        {
          headers: ['overhead (1 − with / without, per round)', 'median (min–max)'],
          rows: [['throughput lost to the outbox insert', showSpread(overhead, pct)]],
        },
        cpuTable({
          caption:
            'Where the CPU went (median over rounds, CPU-milliseconds per 2xx order; bench = autocannon in this process)',
          first: 'variant',
          groups: ['bench', 'api', 'postgres'],
          measure: 'CPU-ms per order',
          unit: 1000,
          variants: variants.map((variant) => ({
            name: variant,
            runs: (runs.get(variant) ?? []).map((r) => ({ cpu: r.cpu, work: r.requests })),
          })),
        }),
        breakdown,
      ],
      notes: [
        `autocannon ${settings.writeConnections} connections, ${settings.writeSeconds} s per run, ${settings.rounds} alternating rounds after a warm-up; one order-service api process per variant (DATABASE_POOL_SIZE 10).`,
        '"With outbox" is the shipped handler: INSERT orders, SELECT pg_current_xact_id() + pg_notify, INSERT outbox_event, COMMIT.',
      ],
      targets: [
        {
          name: 'write overhead ≤ 25 %',
          goal: '≤ 25 %',
          measured: showSpread(overhead, pct),
          met: overhead.median <= 0.25,
        },
      ],
    };
  } finally {
    await Promise.all([stack.stop('b4-api-with-outbox'), stack.stop('b4-api-without-outbox')]);
  }
}
