import { cpuTable, type CpuUse } from '../../cpu.ts';
import type { Section, Table } from '../../report.ts';
import { ratioPerRound, runsOf } from '../../rounds.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int, showSpread, spread } from '../../stats.ts';
import type { BurstRun } from './processor-burst.ts';

export type IngestVariant = 'raw' | 'writer' | 'writer-platformatic';
type IngestRuns = ReadonlyMap<IngestVariant, readonly CpuUse[]>;

const ratio = (v: number) => fixed(v);

function ingestRates(settings: BenchSettings, runs: IngestRuns, variant: IngestVariant): number[] {
  return runsOf(runs, variant).map((use) => settings.inboxMessages / use.wallSeconds);
}

function ingestTables(settings: BenchSettings, runs: IngestRuns): Table[] {
  const raw = ingestRates(settings, runs, 'raw');
  const writer = ingestRates(settings, runs, 'writer');
  const onPlatformatic = ingestRates(settings, runs, 'writer-platformatic');
  const cpuRuns = (variant: IngestVariant) =>
    runsOf(runs, variant).map((cpu) => ({ cpu, work: settings.inboxMessages }));
  return [
    {
      headers: ['reader', 'messages/s median (min–max)', 'runs (messages/s)'],
      rows: [
        ['raw kafkajs consumer (counts only)', showSpread(spread(raw)), raw.map(int).join(', ')],
        [
          'inbox writer (INSERT … ON CONFLICT, commit offsets)',
          showSpread(spread(writer)),
          writer.map(int).join(', '),
        ],
        [
          'inbox writer on @platformatic/kafka (same code, the port’s second adapter)',
          showSpread(spread(onPlatformatic)),
          onPlatformatic.map(int).join(', '),
        ],
        ['ratio inbox / raw (per round)', showSpread(ratioPerRound(writer, raw), ratio), ''],
        [
          'ratio inbox on platformatic / raw kafkajs (per round)',
          showSpread(ratioPerRound(onPlatformatic, raw), ratio),
          '',
        ],
        [
          'ratio inbox on platformatic / inbox on kafkajs (per round)',
          showSpread(ratioPerRound(onPlatformatic, writer), ratio),
          '',
        ],
      ],
    },
    cpuTable({
      caption:
        'Where the CPU went while ingesting (median over rounds, CPU-seconds per 100k messages; bench = this process: the consumer, the writer)',
      first: 'reader',
      groups: ['bench', 'postgres', 'kafka'],
      measure: 'CPU-s per 100k',
      unit: 100_000,
      variants: [
        { name: 'raw kafkajs consumer', runs: cpuRuns('raw') },
        { name: 'inbox writer', runs: cpuRuns('writer') },
        { name: 'inbox writer on platformatic', runs: cpuRuns('writer-platformatic') },
      ],
    }),
  ];
}

function processorTable(settings: BenchSettings, runs: readonly BurstRun[]): Table {
  return {
    caption: `Processor: ${int(settings.processorMessages)} inbox rows over ${settings.keys} keys, handler sleeps ${settings.handlerMs} ms`,
    headers: [
      'concurrency',
      'events/s',
      'seconds',
      `ceiling (concurrency × 1000 / ${settings.handlerMs} ms)`,
      'of ceiling',
    ],
    rows: runs.map((r) => {
      const ceiling = (r.concurrency * 1000) / settings.handlerMs;
      return [
        String(r.concurrency),
        int(r.rate),
        fixed(r.seconds, 1),
        int(ceiling),
        `${fixed((r.rate / ceiling) * 100, 0)} %`,
      ];
    }),
  };
}

/** B5's section: ingest rates and CPU side by side, the processor's burst, the target. */
export function inboxSection(
  settings: BenchSettings,
  ingest: IngestRuns,
  processor: readonly BurstRun[],
): Section {
  const ingestRatio = ratioPerRound(
    ingestRates(settings, ingest, 'writer'),
    ingestRates(settings, ingest, 'raw'),
  );
  return {
    id: 'B5',
    title: `Inbox: writer ingest vs raw kafkajs consumer; processor with a ${settings.handlerMs} ms handler`,
    tables: [...ingestTables(settings, ingest), processorTable(settings, processor)],
    notes: [
      `${int(settings.inboxMessages)} messages (~500-byte JSON, ${settings.keys} keys, ${settings.partitions} partitions) per ingest run; a fresh consumer group each run; timed from the first message seen to the last, polled every 10 ms for both readers.`,
      "A processor worker claims the heads of up to 16 keys (FOR UPDATE SKIP LOCKED) and handles them in one transaction, each row's handler and processed mark in a savepoint of its own, one commit per claim; the handler's sleep holds its worker, so a claim's rows take their turns.",
    ],
    targets: [
      {
        name: 'inbox ingest ≥ 0.6 × raw consumer',
        goal: '≥ 0.60',
        measured: showSpread(ingestRatio, ratio),
        met: ingestRatio.median >= 0.6,
      },
    ],
  };
}
