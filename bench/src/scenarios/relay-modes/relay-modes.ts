import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { runRounds } from '../../rounds.ts';
import { fixed, int, percentile } from '../../stats.ts';
import { drainRun } from './drain-run.ts';
import { rateRun, type RateRun } from './rate-run.ts';
import {
  RELAY_MODES,
  setUpRelayModes,
  systemOf,
  tearDownRelayModes,
  type RelayModesBench,
} from './relay-modes-bench.ts';
import { relayModesSection, type RelayModesRuns } from './relay-modes-section.ts';
import { writeRun } from './write-run.ts';

/** Each offered rate through each relay, the order alternating, after a warm-up at that rate. */
async function measureRates(bench: RelayModesBench): Promise<RateRun[]> {
  const { settings, log } = bench.ctx;
  const runs: RateRun[] = [];
  for (const [i, rate] of settings.latencyRates.entries()) {
    const order = i % 2 === 0 ? RELAY_MODES : [...RELAY_MODES].reverse();
    for (const mode of order) {
      const system = systemOf(bench, mode);
      await rateRun(bench, system, { rate, seconds: Math.min(2, settings.latencySeconds) });
      const run = await rateRun(bench, system, { rate, seconds: settings.latencySeconds });
      const p = (q: number) => fixed(percentile(run.toKafkaMs, q), 1);
      log(`B8 ${rate}/s ${mode}: commit→Kafka p50 ${p(50)} p99 ${p(99)} ms`);
      runs.push(run);
    }
  }
  return runs;
}

async function measure(ctx: BenchContext, bench: RelayModesBench): Promise<RelayModesRuns> {
  const { settings } = ctx;
  const drains = await runRounds(RELAY_MODES, settings.rounds, async (mode, round) => {
    const run = await drainRun(bench, systemOf(bench, mode));
    ctx.log(`B8 drain round ${round + 1} ${mode}: ${int(run.work / run.totalSeconds)} events/s`);
    return run;
  });
  const rates = await measureRates(bench);
  const writes = await runRounds(RELAY_MODES, settings.rounds, async (mode, round) => {
    const run = await writeRun(bench, systemOf(bench, mode), settings.writeSeconds);
    ctx.log(`B8 writes round ${round + 1} ${mode}: ${int(run.rps)} orders/s`);
    return run;
  });
  return { drains, rates, writes };
}

/**
 * B8: the polling relay against the CDC relay (Debezium on Kafka Connect), each with its own
 * order-service database, api and relay role, on the same PostgreSQL and Kafka: the drain of a
 * backlog built while the relay was held, commit → Kafka at fixed rates, the api's write
 * throughput while its relay publishes, and what each costs in CPU, WAL and memory.
 */
export const relayModes: Scenario = defineScenario({
  id: 'B8',
  setUp: setUpRelayModes,
  measure,
  report: (ctx, _bench, runs) => relayModesSection(ctx.settings, runs),
  tearDown: tearDownRelayModes,
});
