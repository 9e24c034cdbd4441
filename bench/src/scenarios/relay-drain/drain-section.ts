import { cpuTable, type CpuRun } from '../../cpu.ts';
import type { Section, Table, Target } from '../../report.ts';
import { ratioPerRound, runsOf } from '../../rounds.ts';
import { fixed, int, showSpread, spread, type Spread } from '../../stats.ts';
import type { DrainBench } from './drain-runs.ts';

export type DrainVariant =
  'raw' | 'relay' | 'naive' | 'guide' | 'raw-platformatic' | 'relay-platformatic';
type DrainRuns = ReadonlyMap<DrainVariant, readonly CpuRun[]>;

export const rateOf = (run: CpuRun): number => run.work / run.cpu.wallSeconds;

const names: readonly (readonly [string, DrainVariant])[] = [
  ['raw kafkajs sendBatch (A)', 'raw'],
  ['relay, 1 instance (default options)', 'relay'],
  ['row-by-row relay, looping at once (B)', 'naive'],
  ['row-by-row relay as written (fixedDelay 500 ms)', 'guide'],
  ['raw @platformatic/kafka send, through the port', 'raw-platformatic'],
  ['relay on @platformatic/kafka, 1 instance', 'relay-platformatic'],
];

const ratio = (v: number) => fixed(v);

function rates(runs: DrainRuns, variant: DrainVariant): number[] {
  return runsOf(runs, variant).map(rateOf);
}

/** The relay's rate over another's, per round. */
function relayTo(runs: DrainRuns, other: DrainVariant): Spread {
  return ratioPerRound(rates(runs, 'relay'), rates(runs, other));
}

/** One variant's rate over another's, per round. */
function rateTo(runs: DrainRuns, variant: DrainVariant, other: DrainVariant): Spread {
  return ratioPerRound(rates(runs, variant), rates(runs, other));
}

function rateTables(runs: DrainRuns): Table[] {
  return [
    {
      headers: ['publisher', 'events/s median (min–max)', 'runs (events/s)'],
      rows: names.map(([name, variant]) => [
        name,
        showSpread(spread(rates(runs, variant))),
        rates(runs, variant).map(int).join(', '),
      ]),
    },
    {
      headers: ['ratio (per round, then median)', 'median (min–max)'],
      rows: [
        ['relay / raw', showSpread(relayTo(runs, 'raw'), ratio)],
        ['relay / row-by-row, looping at once', showSpread(relayTo(runs, 'naive'), ratio)],
        ['relay / row-by-row as written', showSpread(relayTo(runs, 'guide'), (v) => fixed(v, 0))],
        [
          'relay on platformatic / raw platformatic',
          showSpread(rateTo(runs, 'relay-platformatic', 'raw-platformatic'), ratio),
        ],
        [
          'relay on platformatic / relay on kafkajs',
          showSpread(rateTo(runs, 'relay-platformatic', 'relay'), ratio),
        ],
      ],
    },
  ];
}

function drainNotes({ settings, payloadBytes }: DrainBench): string[] {
  return [
    `${int(settings.drainEvents)} events per relay and raw run, ~${payloadBytes}-byte JSON payloads, ${settings.keys} keys, ${settings.partitions} partitions, batch ${settings.batchSize}, acks -1, idempotent producer with 1 request in flight for all three.`,
    `The row-by-row relays are timed for ${settings.naiveSeconds} s per round (or until their ${int(settings.naiveEvents)}-row backlog is gone); their per-row cost does not depend on the backlog size. "Looping at once" is the guide's code without its schedule (the fairest baseline: its per-row cost); "as written" keeps \`@Scheduled(fixedDelay = 500)\`.`,
    `${settings.rounds} rounds, order rotated each round (raw→relay→naive→guide→…, relay→naive→guide→…→raw, …).`,
    "The platformatic rows run the same producer and relay code on the port's second adapter (`KAFKA_CLIENT=platformatic`); the other rows are on kafkajs.",
    `CPU is read from /proc before and after each timed run: the whole machine, this process, PostgreSQL's process tree and the Kafka JVM; "other" is everything else on the machine in that window (other users' load on a shared machine).`,
  ];
}

function drainTargets(runs: DrainRuns): Target[] {
  const toRaw = relayTo(runs, 'raw');
  const toNaive = relayTo(runs, 'naive');
  const toGuide = relayTo(runs, 'guide');
  return [
    {
      name: 'relay ≥ 0.6 × raw producer',
      goal: '≥ 0.60',
      measured: showSpread(toRaw, ratio),
      met: toRaw.median >= 0.6,
    },
    {
      name: 'relay ≥ 20 × row-by-row relay (looping at once)',
      goal: '≥ 20',
      measured: showSpread(toNaive, (v) => fixed(v, 1)),
      met: toNaive.median >= 20,
    },
    {
      name: 'relay ≥ 20 × row-by-row relay (as written, fixedDelay 500 ms)',
      goal: '≥ 20',
      measured: showSpread(toGuide, (v) => fixed(v, 0)),
      met: toGuide.median >= 20,
    },
  ];
}

/** B1's section: rates, ratios, where the CPU went, notes and targets. */
export function drainSection(runs: DrainRuns, bench: DrainBench): Section {
  return {
    id: 'B1',
    title:
      'Relay drain: one relay vs raw producer vs the row-by-row relay, on kafkajs and on @platformatic/kafka',
    tables: [
      ...rateTables(runs),
      cpuTable({
        caption:
          'Where the CPU went (median over rounds, CPU-seconds per 100k events; bench = this Node process: the producer, the relay)',
        first: 'publisher',
        groups: ['bench', 'postgres', 'kafka'],
        measure: 'CPU-s per 100k',
        unit: 100_000,
        variants: [
          { name: 'raw kafkajs sendBatch (A)', runs: runsOf(runs, 'raw') },
          { name: 'relay', runs: runsOf(runs, 'relay') },
          { name: 'row-by-row, looping at once (B)', runs: runsOf(runs, 'naive') },
          { name: 'raw platformatic', runs: runsOf(runs, 'raw-platformatic') },
          { name: 'relay on platformatic', runs: runsOf(runs, 'relay-platformatic') },
        ],
      }),
    ],
    notes: drainNotes(bench),
    targets: drainTargets(runs),
  };
}
