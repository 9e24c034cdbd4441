import type { Section, Table } from '../../report.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int } from '../../stats.ts';
import { CAP_SECONDS, type MemoryRun, type Sample } from './sample-memory.ts';

type Pick = (sample: Sample) => number | undefined;

/** First, largest and last value of one measure, up to the second the process was done. */
function describe(samples: readonly Sample[], pick: Pick, until: number | undefined) {
  const values = samples
    .filter((s) => until === undefined || s.second <= until)
    .map(pick)
    .filter((v): v is number => v !== undefined);
  return { first: values[0] ?? NaN, max: Math.max(...values), last: values.at(-1) ?? NaN };
}

/** The value at a fraction of a process's own run: "flat" is visible at a glance. */
function at(samples: readonly Sample[], fraction: number, until: number | undefined, pick: Pick) {
  const end = until ?? samples.at(-1)?.second ?? 0;
  const sample = samples.find((s) => s.second >= fraction * end) ?? samples.at(-1);
  const value = sample ? pick(sample) : undefined;
  return value === undefined ? 'n/a' : fixed(value, 0);
}

function processRow(run: MemoryRun, events: number, name: string, role: 'relay' | 'consumer') {
  const done = role === 'relay' ? run.relayDone : run.consumerDone;
  const rss = describe(run.samples, (s) => s[role], done);
  const heap = describe(
    run.samples,
    (s) => (role === 'relay' ? s.relayHeap : s.consumerHeap),
    done,
  );
  return [
    name,
    done === undefined ? `> ${CAP_SECONDS}` : fixed(done, 0),
    done ? int(events / done) : 'n/a',
    ...[rss.first, rss.max, rss.last, heap.max, heap.last].map((v) => fixed(v, 0)),
  ];
}

function tenthsTable(run: MemoryRun): Table {
  const tenths = Array.from({ length: 11 }, (_, i) => i / 10);
  const row = (name: string, until: number | undefined, pick: Pick) => [
    name,
    ...tenths.map((t) => at(run.samples, t, until, pick)),
  ];
  return {
    caption: "RSS (MiB) at each tenth of each process's own run",
    headers: ['process', ...tenths.map((t) => `${t * 100}%`)],
    rows: [
      row('relay', run.relayDone, (s) => s.relay),
      row('consumer', run.consumerDone, (s) => s.consumer),
      row('relay V8 heap used', run.relayDone, (s) => s.relayHeap),
      row('consumer V8 heap used', run.consumerDone, (s) => s.consumerHeap),
    ],
  };
}

/** B6's section: each process's memory through the drain, and the relay's RSS target. */
export function memorySection(
  settings: BenchSettings,
  run: MemoryRun,
  backlog: { readonly seconds: number; readonly rowsPerTransaction: number },
): Section {
  const events = settings.memoryEvents;
  const relayRss = describe(run.samples, (s) => s.relay, run.relayDone);
  const mb = (mib: number) => (mib * 1024 * 1024) / 1e6;
  return {
    id: 'B6',
    title: `Memory: relay and consumer resident set while draining a ${int(events)}-event backlog`,
    tables: [
      {
        headers: [
          'process',
          'done after s',
          'events/s',
          'RSS MiB at start',
          'max',
          'at end',
          'V8 heap used MiB max',
          'at end',
        ],
        rows: [
          processRow(run, events, 'order-service relay', 'relay'),
          processRow(run, events, 'payment-service consumer (inbox writer)', 'consumer'),
        ],
      },
      tenthsTable(run),
    ],
    notes: [
      `Backlog written before the processes start (${fixed(backlog.seconds, 0)} s, ${backlog.rowsPerTransaction / 1000}k rows per transaction, ${settings.keys} keys, ~500-byte payloads); relay batch ${settings.batchSize}, services' defaults otherwise; RSS from /proc/<pid>/status every second.`,
    ],
    targets: [
      {
        name: 'relay RSS flat, < 250 MB through the backlog',
        goal: '< 250 MB',
        measured: `max ${fixed(mb(relayRss.max), 0)} MB (start ${fixed(mb(relayRss.first), 0)} MB)`,
        met: mb(relayRss.max) < 250,
      },
    ],
  };
}
