import path from 'node:path';
import type { ProviderName } from './choose-provider.ts';
import { defineConnect } from './components/connect.ts';
import { defineKafka, newClusterId, type KafkaVoter } from './components/kafka.ts';
import { definePostgres, findPostgresBinaries } from './components/postgres.ts';
import {
  defineDockerConnect,
  defineDockerKafka,
  defineDockerPostgres,
} from './docker/docker-components.ts';
import { dockerHost } from './docker/docker-driver.ts';
import { defineExternal } from './external/external-components.ts';
import { kafkaNodeName } from './kafka-cluster/cluster-shape.ts';
import { findFreePort } from './ports.ts';
import type { ComponentRecord } from './component-record.ts';
import type { ServerName, UpOptions } from './up-options.ts';

interface ServerContext {
  readonly name: string;
  readonly dir: string;
  readonly options: UpOptions;
  /** Kafka nodes, already resolved from the option and STACK_KAFKA_BROKERS. */
  readonly kafkaBrokers: number;
  /** The addresses of the stack's Kafka nodes, once Kafka is defined (Kafka Connect needs them). */
  readonly kafkaAddresses: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/** The ports of each Kafka node: fixed ones step by two from the dev ports, else free ones. */
async function kafkaNodePorts(
  options: UpOptions,
  count: number,
): Promise<{ port: number; controllerPort: number }[]> {
  const fixed = options.ports ?? {};
  const nodes: { port: number; controllerPort: number }[] = [];
  for (let index = 0; index < count; index++) {
    nodes.push({
      port: fixed.kafka === undefined ? await findFreePort() : fixed.kafka + 2 * index,
      controllerPort:
        fixed.kafkaController === undefined
          ? await findFreePort()
          : fixed.kafkaController + 2 * index,
    });
  }
  return nodes;
}

/** A provider that runs the server itself: everything but `external`. */
type RunningProvider = Exclude<ProviderName, 'external'>;

/** Kafka Connect with Debezium, pointed at the stack's Kafka nodes. */
async function defineConnectServer(
  provider: RunningProvider,
  context: ServerContext,
): Promise<ComponentRecord> {
  const { name, dir, options, env } = context;
  const port = options.ports?.connect ?? (await findFreePort());
  return provider === 'docker'
    ? defineDockerConnect({
        stack: name,
        host: await dockerHost(),
        port,
        brokers: context.kafkaAddresses,
      })
    : defineConnect({
        dir: path.join(dir, 'connect'),
        port,
        brokers: context.kafkaAddresses,
        quickStart: !(options.durable ?? false),
        env,
      });
}

async function definePostgresServer(
  provider: RunningProvider,
  context: ServerContext,
): Promise<ComponentRecord> {
  const { name, dir, options, env } = context;
  const ports = options.ports ?? {};
  return provider === 'docker'
    ? defineDockerPostgres({
        stack: name,
        host: await dockerHost(),
        port: ports.postgres ?? (await findFreePort()),
        durable: options.durable ?? false,
      })
    : definePostgres({
        dir: path.join(dir, 'postgres'),
        port: ports.postgres ?? (await findFreePort()),
        binDir: findPostgresBinaries(env),
        durable: options.durable ?? false,
      });
}

/** What every node of one Kafka cluster shares. */
interface KafkaClusterPlan {
  readonly count: number;
  readonly heapMb: number;
  readonly voters: readonly KafkaVoter[];
  readonly clusterId: string;
  /** The Docker host (docker provider only). */
  readonly host: string;
}

/** One node of the cluster, `kafka` alone or `kafka-N` among several. */
function defineKafkaNode(
  provider: RunningProvider,
  context: ServerContext,
  plan: KafkaClusterPlan,
  node: { nodeId: number; port: number; controllerPort: number },
): ComponentRecord {
  const { nodeId, port, controllerPort } = node;
  const { count, heapMb } = plan;
  const nodeName = kafkaNodeName(nodeId, count);
  const cluster = count === 1 ? undefined : { name: nodeName, nodeId, voters: plan.voters };
  if (provider === 'docker') {
    return defineDockerKafka({
      stack: context.name,
      host: plan.host,
      port,
      controllerPort,
      heapMb,
      ...(cluster === undefined ? {} : { node: cluster }),
    });
  }
  return defineKafka({
    dir: path.join(context.dir, nodeName),
    port,
    controllerPort,
    heapMb,
    clusterId: plan.clusterId,
    ...(cluster === undefined ? {} : { node: cluster }),
    // A durable stack is a benchmark's: its brokers run as a production JVM does.
    quickStart: !(context.options.durable ?? false),
    env: context.env,
  });
}

/** Every node of the stack's Kafka cluster: one cluster id, every node a voter. */
async function defineKafkaServer(
  provider: RunningProvider,
  context: ServerContext,
): Promise<ComponentRecord[]> {
  const { options } = context;
  const count = context.kafkaBrokers;
  const heapMb = options.kafkaHeapMb ?? (count === 1 ? 512 : 384);
  const nodes = await kafkaNodePorts(options, count);
  const voters: KafkaVoter[] = nodes.map((node, index) => ({
    nodeId: index + 1,
    controllerPort: node.controllerPort,
  }));
  const clusterId = newClusterId();
  const host = provider === 'docker' ? await dockerHost() : '';
  const plan: KafkaClusterPlan = { count, heapMb, voters, clusterId, host };
  return nodes.map((node, index) =>
    defineKafkaNode(provider, context, plan, { nodeId: index + 1, ...node }),
  );
}

/**
 * How one server of a stack is run, for the stack's provider: one component, or one per node
 * for a Kafka cluster (`kafka-1` …, one cluster id, every node a voter). Free ports unless fixed.
 */
export async function defineServer(
  provider: ProviderName,
  server: ServerName,
  context: ServerContext,
): Promise<ComponentRecord[]> {
  if (provider === 'external') return [defineExternal(server, context.env)];
  if (server === 'connect') return [await defineConnectServer(provider, context)];
  if (server === 'postgres') return [await definePostgresServer(provider, context)];
  return defineKafkaServer(provider, context);
}
