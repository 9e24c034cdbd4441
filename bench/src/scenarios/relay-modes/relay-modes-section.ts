import { cpuTable, type CpuUse } from '../../cpu.ts';
import type { Section, Table } from '../../report.ts';
import { ratioPerRound, runsOf } from '../../rounds.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int, percentile, showSpread, spread } from '../../stats.ts';
import type { DrainRun } from './drain-run.ts';
import type { RateRun } from './rate-run.ts';
import { RELAY_MODES, type RelayMode } from './relay-modes-bench.ts';
import type { WriteRun } from './write-run.ts';

/** Everything B8 measured, for its section. */
export interface RelayModesRuns {
  readonly drains: ReadonlyMap<RelayMode, readonly DrainRun[]>;
  readonly rates: readonly RateRun[];
  readonly writes: ReadonlyMap<RelayMode, readonly WriteRun[]>;
}

const relayNames: Readonly<Record<RelayMode, string>> = {
  polling: 'polling relay (NOTIFY)',
  cdc: 'CDC (Debezium on Kafka Connect)',
};
const publisherNames: Readonly<Record<RelayMode, string>> = {
  polling: 'the relay role (Node)',
  cdc: 'the Kafka Connect worker (JVM)',
};

const drainRate = (run: DrainRun) => run.work / run.totalSeconds;
const ms = (values: readonly number[], p: number) => fixed(percentile(values, p), 1);
const median = (values: readonly number[]) => percentile(values, 50);
/** CPU-milliseconds per order of one group, or of several summed. */
const cpuMsPerOrder = (cpu: CpuUse, orders: number, ...groups: string[]) =>
  fixed((groups.reduce((sum, group) => sum + (cpu.byName[group] ?? 0), 0) * 1000) / orders, 2);

function drainTables(drains: RelayModesRuns['drains']): Table[] {
  const rates = (mode: RelayMode) => runsOf(drains, mode).map(drainRate);
  return [
    {
      headers: [
        'relay',
        'events/s median (min–max)',
        'first event after (s)',
        'whole drain (s)',
        'runs (events/s)',
      ],
      rows: RELAY_MODES.map((mode) => [
        relayNames[mode],
        showSpread(spread(rates(mode))),
        fixed(median(runsOf(drains, mode).map((run) => run.firstEventSeconds)), 2),
        fixed(median(runsOf(drains, mode).map((run) => run.totalSeconds)), 1),
        rates(mode).map(int).join(', '),
      ]),
    },
    {
      headers: ['ratio (per round, then median)', 'median (min–max)'],
      rows: [['CDC / polling', showSpread(ratioPerRound(rates('cdc'), rates('polling')), fixed)]],
    },
    cpuTable({
      caption:
        'Where the CPU went during the drain (median over rounds, CPU-seconds per 100k events; relay = the relay role, which in CDC mode only watches; connect = the Kafka Connect JVM)',
      first: 'relay',
      groups: ['relay', 'connect', 'postgres', 'kafka'],
      measure: 'CPU-s per 100k',
      unit: 100_000,
      variants: RELAY_MODES.map((mode) => ({ name: relayNames[mode], runs: runsOf(drains, mode) })),
    }),
    {
      caption: 'Resident memory of the process that publishes',
      headers: ['relay', 'process', 'before the drain (MiB)', 'at most during it (MiB)'],
      rows: RELAY_MODES.map((mode) => [
        relayNames[mode],
        publisherNames[mode],
        int(median(runsOf(drains, mode).map((run) => run.idleRssMiB))),
        int(Math.max(...runsOf(drains, mode).map((run) => run.maxRssMiB))),
      ]),
    },
  ];
}

function rateTable(rates: readonly RateRun[]): Table {
  return {
    caption:
      'Fixed offered rates, open loop; CPU-ms per order from the first request until every order was published',
    headers: [
      'offered/s',
      'relay',
      'orders',
      'failed',
      'HTTP p50 / p99 ms',
      'commit→Kafka p50 / p95 / p99 / max ms',
      'WAL bytes per order',
      'CPU-ms per order: api / relay / connect / postgres / kafka',
    ],
    rows: rates.map((run) => [
      String(run.rate),
      relayNames[run.mode],
      int(run.orders),
      run.failed === 0 ? '0' : `${run.failed} (${run.failures})`,
      `${ms(run.responseMs, 50)} / ${ms(run.responseMs, 99)}`,
      [50, 95, 99, 100].map((p) => ms(run.toKafkaMs, p)).join(' / '),
      int(run.walBytesPerOrder),
      ['api', 'relay', 'connect', 'postgres', 'kafka']
        .map((group) => cpuMsPerOrder(run.cpu, run.orders, group))
        .join(' / '),
    ]),
  };
}

function writeTables(writes: RelayModesRuns['writes']): Table[] {
  const rps = (mode: RelayMode) => runsOf(writes, mode).map((run) => run.rps);
  const medianOf = (mode: RelayMode, pick: (run: WriteRun) => number) =>
    median(runsOf(writes, mode).map(pick));
  return [
    {
      caption:
        'POST /orders as fast as the api takes them (autocannon) while its relay publishes; WAL and CPU per order until every order was published',
      headers: [
        'relay',
        'orders/s median (min–max)',
        'p99 ms',
        'errors',
        'WAL bytes per order',
        'postgres CPU-ms per order',
        'relay + connect CPU-ms per order',
      ],
      rows: RELAY_MODES.map((mode) => [
        relayNames[mode],
        showSpread(spread(rps(mode))),
        fixed(
          medianOf(mode, (run) => run.p99),
          1,
        ),
        String(runsOf(writes, mode).reduce((sum, run) => sum + run.errors, 0)),
        int(medianOf(mode, (run) => run.walBytesPerOrder)),
        fixed(
          medianOf(mode, (run) => Number(cpuMsPerOrder(run.cpu, run.orders, 'postgres'))),
          2,
        ),
        fixed(
          medianOf(mode, (run) => Number(cpuMsPerOrder(run.cpu, run.orders, 'relay', 'connect'))),
          2,
        ),
      ]),
    },
    {
      headers: ['ratio (per round, then median)', 'median (min–max)'],
      rows: [
        ['orders/s, CDC / polling', showSpread(ratioPerRound(rps('cdc'), rps('polling')), fixed)],
      ],
    },
  ];
}

function notes(settings: BenchSettings): string[] {
  return [
    "Each relay has its own order-service database (one PostgreSQL), api and relay role, the services' defaults but RELAY_BATCH_SIZE=" +
      `${settings.batchSize} for the polling relay. The CDC relay is RELAY_MODE=cdc: the role registers and watches the connector; Debezium 3.6 on one distributed Kafka Connect 3.9 worker (384 MB heap) reads the WAL through its own slot and publishes. Both systems run throughout; the idle one's CPU counts as "other".`,
    `Drain: ${int(settings.drainEvents)} outbox rows written in transactions of 1,000 while the relay is held (polling: the role frozen by SIGSTOP, so it keeps its connections; CDC: the connector paused until its task says PAUSED), then let go; timed until the topic holds every event. ${settings.rounds} rounds, the order alternating.`,
    `Rates: ${settings.latencySeconds} s per run after 2 s unmeasured at the same rate. "Commit" is the order's write transaction start (orders.created_at); "Kafka" the broker's append time (LogAppendTime). WAL is the whole cluster's (pg_current_wal_lsn), so it includes the other system's idle heartbeat.`,
  ];
}

/** B8's section: drain, memory, latency at fixed rates and write throughput, relay against relay. */
export function relayModesSection(settings: BenchSettings, runs: RelayModesRuns): Section {
  return {
    id: 'B8',
    title: 'Polling relay vs CDC relay (Debezium): drain, latency, write cost, CPU, memory',
    tables: [...drainTables(runs.drains), rateTable(runs.rates), ...writeTables(runs.writes)],
    notes: notes(settings),
    targets: [],
  };
}
