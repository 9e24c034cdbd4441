import { DEFAULT_INBOX_PROCESSOR_OPTIONS } from '@outbox-inbox/outbox';
import { orderService } from '@outbox-inbox/order-service';
import { cpuTable } from '../../cpu.ts';
import type { Section, Table, Target } from '../../report.ts';
import { defaultOf } from '../../services.ts';
import type { BenchSettings } from '../../settings.ts';
import { fixed, int, percentile } from '../../stats.ts';
import type { LatencyRun } from './measure-latency.ts';

const CPU_GROUPS = ['bench', 'api', 'relay', 'consumer', 'processor', 'postgres', 'kafka'];

const ms = (values: readonly number[], p: number) => fixed(percentile(values, p), 1);
const quantiles = (values: readonly number[]) =>
  `${ms(values, 50)} / ${ms(values, 95)} / ${ms(values, 99)} / ${ms(values, 100)}`;

function latencyTable(runs: readonly LatencyRun[]): Table {
  return {
    headers: [
      'offered/s',
      'wake-up',
      'sent/s',
      'orders',
      'failed',
      'HTTP p50 / p99 ms',
      'commit→Kafka p50 / p95 / p99 / max ms',
      'commit→handled p50 / p95 / p99 / max ms',
    ],
    rows: runs.map((r) => [
      String(r.rate),
      r.wakeUp,
      int(r.offeredRate),
      int(r.orders),
      r.failed === 0 ? '0' : `${r.failed} (${r.failures})`,
      `${ms(r.responseMs, 50)} / ${ms(r.responseMs, 99)}`,
      quantiles(r.toKafkaMs),
      quantiles(r.toHandledMs),
    ]),
  };
}

function latencyCpuTable(runs: readonly LatencyRun[]): Table {
  return cpuTable({
    caption:
      'Where the CPU went while the load was offered (CPU-seconds per second = cores in use; bench = this process: the HTTP load and the topic reader)',
    first: 'run',
    groups: CPU_GROUPS,
    measure: 'CPU-s per s',
    unit: 1,
    variants: runs.map((r) => ({
      name: `${r.rate}/s ${r.wakeUp}`,
      runs: [{ cpu: r.cpu, work: r.cpu.wallSeconds }],
    })),
  });
}

function latencyTargets(runs: readonly LatencyRun[]): Target[] {
  const at1000 = runs.find((r) => r.wakeUp === 'notify' && r.rate === 1000);
  if (!at1000) return [];
  return [
    {
      name: 'p99 commit → Kafka ≤ 50 ms at 1000 orders/s, NOTIFY',
      goal: '≤ 50 ms',
      measured: `${ms(at1000.toKafkaMs, 99)} ms`,
      met: percentile(at1000.toKafkaMs, 99) <= 50,
    },
  ];
}

function latencyNotes(settings: BenchSettings): string[] {
  const relayPollMs = defaultOf(orderService, 'RELAY_POLL_INTERVAL_MS');
  const processorPollMs = DEFAULT_INBOX_PROCESSOR_OPTIONS.pollIntervalMs;
  return [
    `${settings.latencySeconds} s per run after a short unmeasured warm-up at the same rate; open-loop HTTP load from the bench process.`,
    "Processes: order-service api and relay, payment-service consumer (inbox writer) and processor, each its own process with the services' defaults except RELAY_BATCH_SIZE=" +
      `${settings.batchSize}. Polling alone: relay every ${relayPollMs} ms (RELAY_POLL_INTERVAL_MS default), processor every ${processorPollMs} ms (library default).`,
    '"Commit" is conservatively the write transaction\'s start (`orders.created_at = now()`), so each latency includes that transaction\'s own few milliseconds; "Kafka" is the broker\'s append timestamp (topic `message.timestamp.type=LogAppendTime`); "handled" is `inbox_event.processed_at`, the start of the processor\'s transaction for that row.',
  ];
}

/** B3's section: latencies per rate and wake-up mode, where the CPU went, the target. */
export function latencySection(settings: BenchSettings, runs: readonly LatencyRun[]): Section {
  return {
    id: 'B3',
    title: 'Latency: commit → Kafka append and commit → handled by payment-service',
    tables: [latencyTable(runs), latencyCpuTable(runs)],
    notes: latencyNotes(settings),
    targets: latencyTargets(runs),
  };
}
