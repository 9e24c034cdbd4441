import { Stack } from '@outbox-inbox/infra';
import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import type { CpuRun } from '../../cpu.ts';
import { benchClients, benchKafka } from '../../kafka.ts';
import { runRounds } from '../../rounds.ts';
import { int } from '../../stats.ts';
import { clusterDrainSection, type ClusterVariant } from './cluster-drain-section.ts';
import { rateOf } from './drain-section.ts';
import { freshDrainTopics, rawRun, relayRun, setUpDrain, type DrainBench } from './drain-runs.ts';

const variants: readonly ClusterVariant[] = ['raw@1', 'relay@1', 'raw@3', 'relay@3'];

/** The replication a production cluster runs with (as the contracts declare the topics). */
const clusterReplication = { replicationFactor: 3, minInsyncReplicas: 2 } as const;
const clusterNodes = ['kafka-1', 'kafka-2', 'kafka-3'] as const;

export interface ClusterDrainBench {
  /** The bench stack's single broker, topics with one replica. */
  readonly single: DrainBench;
  /** A three-node cluster beside it, the same outbox database, topics RF 3, min ISR 2. */
  readonly cluster: DrainBench;
  readonly clusterStack: Stack;
}

async function setUpClusterDrain(ctx: BenchContext): Promise<ClusterDrainBench> {
  ctx.log('B1c starting a three-node Kafka cluster');
  const clusterStack = await Stack.up({
    name: `${ctx.stack.name}-cluster`,
    servers: ['kafka'],
    kafkaBrokers: clusterNodes.length,
  });
  try {
    const single = await setUpDrain(ctx, 'bench_drain_cluster');
    const clusterKafka = benchKafka(clusterStack.kafkaBrokers);
    const cluster: DrainBench = {
      ...single,
      kafka: clusterKafka,
      clients: benchClients(clusterKafka, clusterStack.kafkaBrokers),
      servers: {
        postgres: single.servers['postgres'],
        ...Object.fromEntries(clusterNodes.map((node) => [node, clusterStack.pid(node)])),
      },
    };
    await freshDrainTopics(cluster, clusterReplication);
    return { single, cluster, clusterStack };
  } catch (error) {
    await clusterStack.down();
    throw error;
  }
}

function runVariant(bench: ClusterDrainBench, variant: ClusterVariant): Promise<CpuRun> {
  const [publisher, brokers] = variant.split('@');
  const target = brokers === '3' ? bench.cluster : bench.single;
  return publisher === 'raw' ? rawRun(target) : relayRun(target);
}

/**
 * B1c: B1's relay and raw producer on one broker (RF 1) and on a three-node cluster (RF 3,
 * min ISR 2, acks -1), side by side in the same rounds, so replication's cost shows in both.
 */
export const clusterDrain: Scenario = defineScenario({
  id: 'B1c',
  setUp: setUpClusterDrain,
  async measure(ctx: BenchContext, bench: ClusterDrainBench) {
    ctx.log('B1c warm-up');
    await rawRun(bench.single);
    await rawRun(bench.cluster);
    return runRounds(variants, ctx.settings.rounds, async (variant, round) => {
      const run = await runVariant(bench, variant);
      ctx.log(`B1c round ${round + 1} ${variant}: ${int(rateOf(run))} events/s`);
      return run;
    });
  },
  report: (_ctx, bench, runs) => clusterDrainSection(runs, bench.single),
  async tearDown(bench) {
    await bench.single.db.destroy();
    await bench.clusterStack.down();
  },
});
