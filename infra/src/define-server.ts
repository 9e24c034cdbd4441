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

/**
 * How one server of a stack is run, for the stack's provider: one component, or one per node
 * for a Kafka cluster (`kafka-1` …, one cluster id, every node a voter). Free ports unless fixed.
 */
export async function defineServer(
  provider: ProviderName,
  server: ServerName,
  context: ServerContext,
): Promise<ComponentRecord[]> {
  const { name, dir, options, env } = context;
  const ports = options.ports ?? {};
  if (provider === 'external') return [defineExternal(server, env)];
  if (server === 'connect') {
    const port = ports.connect ?? (await findFreePort());
    return provider === 'docker'
      ? [
          defineDockerConnect({
            stack: name,
            host: await dockerHost(),
            port,
            brokers: context.kafkaAddresses,
          }),
        ]
      : [
          defineConnect({
            dir: path.join(dir, 'connect'),
            port,
            brokers: context.kafkaAddresses,
            quickStart: !(options.durable ?? false),
            env,
          }),
        ];
  }
  if (server === 'postgres') {
    return provider === 'docker'
      ? [
          defineDockerPostgres({
            stack: name,
            host: await dockerHost(),
            port: ports.postgres ?? (await findFreePort()),
            durable: options.durable ?? false,
          }),
        ]
      : [
          definePostgres({
            dir: path.join(dir, 'postgres'),
            port: ports.postgres ?? (await findFreePort()),
            binDir: findPostgresBinaries(env),
            durable: options.durable ?? false,
          }),
        ];
  }
  const count = context.kafkaBrokers;
  const heapMb = options.kafkaHeapMb ?? (count === 1 ? 512 : 384);
  const nodes = await kafkaNodePorts(options, count);
  const voters: KafkaVoter[] = nodes.map((node, index) => ({
    nodeId: index + 1,
    controllerPort: node.controllerPort,
  }));
  const clusterId = newClusterId();
  const host = provider === 'docker' ? await dockerHost() : '';
  return nodes.map((node, index) => {
    const nodeId = index + 1;
    const nodeName = kafkaNodeName(nodeId, count);
    const cluster = count === 1 ? undefined : { name: nodeName, nodeId, voters };
    if (provider === 'docker') {
      return defineDockerKafka({
        stack: name,
        host,
        port: node.port,
        controllerPort: node.controllerPort,
        heapMb,
        ...(cluster === undefined ? {} : { node: cluster }),
      });
    }
    return defineKafka({
      dir: path.join(dir, nodeName),
      port: node.port,
      controllerPort: node.controllerPort,
      heapMb,
      clusterId,
      ...(cluster === undefined ? {} : { node: cluster }),
      // A durable stack is a benchmark's: its brokers run as a production JVM does.
      quickStart: !(options.durable ?? false),
      env,
    });
  });
}
