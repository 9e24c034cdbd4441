import { orderService } from '@outbox-inbox/order-service';
import { cpuTable } from '../../cpu.ts';
import type { Section, Table } from '../../report.ts';
import { ratioPerRound, runsOf } from '../../rounds.ts';
import { defaultOf } from '../../services.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int, showSpread, spread, type Spread } from '../../stats.ts';
import { writeVariants, type WriteRun, type WriteVariant } from './cannon.ts';

type WriteRuns = ReadonlyMap<WriteVariant, readonly WriteRun[]>;

const pct = (v: number) => `${fixed(v * 100, 1)} %`;

/** Throughput lost to the outbox insert, relative to the plain write, per round. */
function overheadOf(runs: WriteRuns): Spread {
  const rps = (variant: WriteVariant) => runsOf(runs, variant).map((run) => run.rps);
  const kept = ratioPerRound(rps('with outbox'), rps('without outbox'));
  return spread(kept.runs.map((ratio) => 1 - ratio));
}

function throughputTables(runs: WriteRuns): Table[] {
  return [
    {
      headers: [
        'variant',
        'orders/s median (min–max)',
        'p50 ms (runs)',
        'p99 ms (runs)',
        'errors',
        'runs (orders/s)',
      ],
      rows: writeVariants.map((variant) => {
        const list = runsOf(runs, variant);
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
      rows: [['throughput lost to the outbox insert', showSpread(overheadOf(runs), pct)]],
    },
  ];
}

function writeCpuTable(runs: WriteRuns): Table {
  return cpuTable({
    caption:
      'Where the CPU went (median over rounds, CPU-milliseconds per 2xx order; bench = autocannon in this process)',
    first: 'variant',
    groups: ['bench', 'api', 'postgres'],
    measure: 'CPU-ms per order',
    unit: 1000,
    variants: writeVariants.map((variant) => ({
      name: variant,
      runs: runsOf(runs, variant).map((r) => ({ cpu: r.cpu, work: r.requests })),
    })),
  });
}

/** B4's section: throughput with and without the outbox, the overhead, CPU, the breakdown. */
export function writeOverheadSection(
  settings: BenchSettings,
  runs: WriteRuns,
  breakdown: Table,
): Section {
  const overhead = overheadOf(runs);
  return {
    id: 'B4',
    title: 'The price of atomicity: POST /orders with and without the outbox insert',
    tables: [...throughputTables(runs), writeCpuTable(runs), breakdown],
    notes: [
      `autocannon ${settings.writeConnections} connections, ${settings.writeSeconds} s per run, ${settings.rounds} alternating rounds after a warm-up; one order-service api process per variant (DATABASE_POOL_SIZE ${defaultOf(orderService, 'DATABASE_POOL_SIZE')}).`,
      '"With outbox" is the shipped handler: INSERT orders, SELECT pg_current_xact_id() + pg_notify, INSERT outbox_event, COMMIT. "Without outbox" is the same process with the bench\'s own route (`bench/src/variants/`), which inserts the order row alone.',
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
}
