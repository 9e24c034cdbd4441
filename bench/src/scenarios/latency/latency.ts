import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { fixed, percentile } from '../../stats.ts';
import { setUpLatency, startWorkers, tearDownLatency, type LatencyBench } from './latency-bench.ts';
import { latencySection } from './latency-section.ts';
import { measureLatency, type LatencyRun } from './measure-latency.ts';

const wakeUps = ['notify', 'polling'] as const;

function logRun(ctx: BenchContext, run: LatencyRun): void {
  const p = (values: readonly number[], q: number) => fixed(percentile(values, q), 1);
  ctx.log(
    `B3 ${run.rate}/s ${run.wakeUp}: commit→Kafka p50 ${p(run.toKafkaMs, 50)} p99 ${p(run.toKafkaMs, 99)} ms; commit→handled p50 ${p(run.toHandledMs, 50)} p99 ${p(run.toHandledMs, 99)} ms`,
  );
}

/** Each offered rate with each wake-up mode, on fresh workers, after a warm-up at that rate. */
async function measureAll(bench: LatencyBench): Promise<LatencyRun[]> {
  const { settings } = bench.ctx;
  const runs: LatencyRun[] = [];
  let generation = 0;
  for (const rate of settings.latencyRates) {
    for (const wakeUp of wakeUps) {
      const workers = await startWorkers(bench, wakeUp, ++generation);
      // Warm-up at the same rate (JIT, connection pools, the consumer's fetch loop): not counted.
      const warmUp = Math.min(2, settings.latencySeconds);
      await measureLatency(bench, { rate, seconds: warmUp, wakeUp, workers });
      const run = await measureLatency(bench, {
        rate,
        seconds: settings.latencySeconds,
        wakeUp,
        workers,
      });
      runs.push(run);
      logRun(bench.ctx, run);
      await Promise.all(workers.map((worker) => worker.stop()));
    }
  }
  return runs;
}

/**
 * B3: orders are POSTed to order-service's api at a fixed offered rate (open loop). Latency is
 * measured from the order's write transaction (orders.created_at, its start: conservative) to
 * (a) Kafka appending the event (the topic stamps records with LogAppendTime, the broker's
 * clock at append, which is the ack of an acks=-1 send on a one-broker cluster) and (b)
 * payment-service's processor handling it (`inbox_event.processed_at`). Each rate runs with
 * NOTIFY wake-up, then with polling alone. One machine, one clock.
 */
export const latency: Scenario = defineScenario({
  id: 'B3',
  setUp: setUpLatency,
  measure: (_ctx, bench) => measureAll(bench),
  report: (ctx, _bench, runs) => latencySection(ctx.settings, runs),
  tearDown: tearDownLatency,
});
