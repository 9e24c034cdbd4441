import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import type { CpuRun } from '../../cpu.ts';
import { runRounds } from '../../rounds.ts';
import { int } from '../../stats.ts';
import { drainSection, rateOf, type DrainVariant } from './drain-section.ts';
import { naiveRun, rawRun, relayRun, setUpDrain, type DrainBench } from './drain-runs.ts';

const variants: readonly DrainVariant[] = [
  'raw',
  'relay',
  'naive',
  'guide',
  'raw-platformatic',
  'relay-platformatic',
];

function runVariant(bench: DrainBench, variant: DrainVariant): Promise<CpuRun> {
  switch (variant) {
    case 'raw':
      return rawRun(bench);
    case 'relay':
      return relayRun(bench);
    case 'raw-platformatic':
      return rawRun(bench, 'platformatic');
    case 'relay-platformatic':
      return relayRun(bench, 'platformatic');
    case 'naive':
      return naiveRun(bench, false);
    case 'guide':
      return naiveRun(bench, true);
  }
}

/**
 * B1: one relay drains a backlog; baseline A is raw kafkajs `sendBatch` of the same messages
 * (same batch size, the relay's own producer); baseline B is the style guide's row-by-row
 * relay, looping at once and as written. The raw producer and the relay again on the port's
 * second client (@platformatic/kafka). Rounds side by side; ratios within a round.
 */
export const relayDrain: Scenario = defineScenario({
  id: 'B1',
  setUp: setUpDrain,
  async measure(ctx: BenchContext, bench: DrainBench) {
    // Warm-up: the broker's JIT and page cache, and this process's, before anything counts.
    ctx.log('B1 warm-up');
    await rawRun(bench);
    await rawRun(bench, 'platformatic');
    return runRounds(variants, ctx.settings.rounds, async (variant, round) => {
      const run = await runVariant(bench, variant);
      ctx.log(`B1 round ${round + 1} ${variant}: ${int(rateOf(run))} events/s`);
      return run;
    });
  },
  report: (_ctx, bench, runs) => drainSection(runs, bench),
  tearDown: (bench) => bench.db.destroy(),
});
