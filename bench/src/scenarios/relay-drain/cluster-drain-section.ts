import { cpuTable, type CpuRun } from '../../cpu.ts';
import type { Section, Target } from '../../report.ts';
import { ratioPerRound, runsOf } from '../../rounds.ts';
import { fixed, int, showSpread, spread } from '../../stats.ts';
import type { DrainBench } from './drain-runs.ts';
import { rateOf } from './drain-section.ts';

/** A publisher on one broker (`@1`) or on the three-node cluster (`@3`). */
export type ClusterVariant = 'raw@1' | 'relay@1' | 'raw@3' | 'relay@3';
type ClusterRuns = ReadonlyMap<ClusterVariant, readonly CpuRun[]>;

const rates = (runs: ClusterRuns, variant: ClusterVariant): number[] =>
  runsOf(runs, variant).map(rateOf);
const ratio = (runs: ClusterRuns, a: ClusterVariant, b: ClusterVariant) =>
  ratioPerRound(rates(runs, a), rates(runs, b));

const publishers = [
  ['raw kafkajs sendBatch', 'raw'],
  ['relay, 1 instance (default options)', 'relay'],
] as const;

function rateRows(runs: ClusterRuns): string[][] {
  return publishers.map(([name, publisher]) => [
    name,
    showSpread(spread(rates(runs, `${publisher}@1`))),
    showSpread(spread(rates(runs, `${publisher}@3`))),
    showSpread(ratio(runs, `${publisher}@3`, `${publisher}@1`), fixed),
  ]);
}

function clusterTargets(runs: ClusterRuns): Target[] {
  const toRaw = ratio(runs, 'relay@3', 'raw@3');
  return [
    {
      name: 'relay ≥ 0.6 × raw producer, on the three-node cluster',
      goal: '≥ 0.60',
      measured: showSpread(toRaw, fixed),
      met: toRaw.median >= 0.6,
    },
  ];
}

/** B1c's section: each publisher on one broker and on three, and what replication costs. */
export function clusterDrainSection(runs: ClusterRuns, bench: DrainBench): Section {
  const { settings } = bench;
  return {
    id: 'B1c',
    title: 'Relay drain on a three-node cluster: replication factor 3 against one broker',
    tables: [
      {
        headers: [
          'publisher',
          '1 broker, RF 1: events/s',
          '3 brokers, RF 3, min ISR 2: events/s',
          '3 brokers / 1 broker (per round)',
        ],
        rows: rateRows(runs),
      },
      {
        headers: ['ratio (per round, then median)', 'median (min–max)'],
        rows: [
          ['relay / raw, 1 broker', showSpread(ratio(runs, 'relay@1', 'raw@1'), fixed)],
          ['relay / raw, 3 brokers', showSpread(ratio(runs, 'relay@3', 'raw@3'), fixed)],
        ],
      },
      cpuTable({
        caption:
          'Where the CPU went on the cluster (median over rounds, CPU-seconds per 100k events)',
        first: 'publisher',
        groups: ['bench', 'postgres', 'kafka-1', 'kafka-2', 'kafka-3'],
        measure: 'CPU-s per 100k',
        unit: 100_000,
        variants: [
          { name: 'raw kafkajs sendBatch', runs: runsOf(runs, 'raw@3') },
          { name: 'relay', runs: runsOf(runs, 'relay@3') },
        ],
      }),
    ],
    notes: [
      `${int(settings.drainEvents)} events per run, ${settings.partitions} partitions, batch ${settings.batchSize}, acks -1, the relay's idempotent producer for both publishers, one outbox database.`,
      'The single broker is the bench stack’s (1 GiB heap); the cluster is three combined broker + controller JVMs of 384 MiB heap each on the same two cores, so every replica’s copy and fetch competes with PostgreSQL and the publisher for CPU.',
      `${settings.rounds} rounds, the four runs rotated each round; ratios are taken within a round.`,
    ],
    targets: clusterTargets(runs),
  };
}
