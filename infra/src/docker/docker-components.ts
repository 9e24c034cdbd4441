import type { ContainerRecord } from '../component-record.ts';
import { connectHeapMb, connectProjectDir, connectWorkerSettings } from '../components/connect.ts';
import { serverJvmOptions } from '../components/jvm.ts';
import { brokerSession, type KafkaVoter } from '../components/kafka.ts';
import { postgresSettingArgs, postgresSettings } from '../components/postgres.ts';
import { connectImage, connectWorkerEnv } from './connect-image.ts';

export const dockerImages = Object.freeze({
  postgres: 'postgres:15',
  kafka: 'apache/kafka:3.9.1',
});

/** Label on every container a stack creates: `docker ps --filter label=outbox-inbox.stack=dev`. */
export const stackLabel = 'outbox-inbox.stack';

function containerName(stack: string, component: string): string {
  return `outbox-${stack.replaceAll(/[^a-zA-Z0-9_.-]/g, '-')}-${component}`;
}

/**
 * Clients on this machine reach published ports on the Docker host. `localhost` may resolve to
 * ::1 first, where a Docker engine in a VM does not always forward; the IPv4 loopback always works.
 */
export function clientHost(dockerHost: string): string {
  return dockerHost === 'localhost' ? '127.0.0.1' : dockerHost;
}

/** PostgreSQL 15 in a container, trust auth like the local provider, data kept in the container. */
export function defineDockerPostgres(options: {
  stack: string;
  port: number;
  host: string;
  durable?: boolean;
}): ContainerRecord {
  const { stack, port } = options;
  const url = `postgres://postgres@${clientHost(options.host)}:${port}/postgres`;
  return {
    name: 'postgres',
    kind: 'container',
    container: {
      image: dockerImages.postgres,
      name: containerName(stack, 'postgres'),
      env: { POSTGRES_HOST_AUTH_METHOD: 'trust', LC_ALL: 'C.UTF-8' },
      // The same settings as the local provider: see components/postgres.ts for why.
      command: ['postgres', ...postgresSettingArgs(postgresSettings(options.durable ?? false))],
      ports: [{ container: 5432, host: port }],
      labels: { [stackLabel]: stack },
    },
    readiness: { type: 'postgres', url },
    // The first start pulls the image and runs initdb.
    readyTimeoutMs: 120_000,
    stopSignal: 'SIGINT',
    endpoints: { url },
    ports: { postgres: port },
  };
}

/** The fixed KRaft cluster id of docker stacks (the image formats once; a wipe recreates). */
const dockerClusterId = 'b3V0Ym94LWluYm94LXN0YQ';

/** Inside a cluster's network, brokers replicate over this listener, by container name. */
const internalPort = 9094;

/** The Docker network a stack's Kafka cluster talks on: containers find each other by name. */
export function clusterNetworkName(stack: string): string {
  return `outbox-${stack.replaceAll(/[^a-zA-Z0-9_.-]/g, '-')}-kafka`;
}

/** The listeners of one node: a lone broker needs none but its published one. */
function kafkaListenerEnv(options: {
  stack: string;
  port: number;
  controllerPort: number;
  brokers: string;
  node?: { name: string; nodeId: number; voters: readonly KafkaVoter[] } | undefined;
}): Record<string, string> {
  const { stack, port, controllerPort, brokers, node } = options;
  if (node === undefined) {
    return {
      KAFKA_NODE_ID: '1',
      KAFKA_LISTENERS: `PLAINTEXT://:${port},CONTROLLER://:${controllerPort}`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${brokers}`,
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: `1@localhost:${controllerPort}`,
    };
  }
  // Clients on the host use the published port; the nodes replicate and vote inside the
  // network, where 127.0.0.1 would be each container itself.
  const voters = node.voters
    .map((voter) => {
      const host = containerName(stack, `kafka-${voter.nodeId}`);
      return `${voter.nodeId}@${host}:${voter.controllerPort}`;
    })
    .join(',');
  return {
    KAFKA_NODE_ID: String(node.nodeId),
    KAFKA_LISTENERS: `PLAINTEXT://:${port},INTERNAL://:${internalPort},CONTROLLER://:${controllerPort}`,
    KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${brokers},INTERNAL://${containerName(stack, node.name)}:${internalPort}`,
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP:
      'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT',
    KAFKA_INTER_BROKER_LISTENER_NAME: 'INTERNAL',
    KAFKA_CONTROLLER_QUORUM_VOTERS: voters,
  };
}

/**
 * Apache Kafka 3.9 in KRaft combined mode, alone or as one node of a cluster (then named
 * `kafka-N`, on the stack's own network). The broker listens inside the container on the same
 * port number it is published on, and advertises that host port: a restarted or recreated
 * broker keeps its address, and clients inside and outside the container agree on it.
 * The image formats its storage on first start only, so a restarted container keeps its data.
 */
export function defineDockerKafka(options: {
  stack: string;
  port: number;
  host: string;
  controllerPort?: number;
  heapMb?: number;
  node?: { name: string; nodeId: number; voters: readonly KafkaVoter[] };
}): ContainerRecord {
  const { stack, port, node } = options;
  const controllerPort = options.controllerPort ?? 9093;
  const brokers = `${clientHost(options.host)}:${port}`;
  const heap = `${options.heapMb ?? 512}m`;
  const replication = String(Math.min(3, node?.voters.length ?? 1));
  const minIsr = String(Math.min(2, Number(replication)));
  const name = node?.name ?? 'kafka';
  const nodeId = node?.nodeId ?? 1;
  const session = brokerSession(node?.voters.length ?? 1);
  return {
    name,
    kind: 'container',
    container: {
      image: dockerImages.kafka,
      name: containerName(stack, name),
      env: {
        CLUSTER_ID: dockerClusterId,
        KAFKA_PROCESS_ROLES: 'broker,controller',
        ...kafkaListenerEnv({ stack, port, controllerPort, brokers, node }),
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        // A volume in the image: kept across restarts, dropped with the container (wipe, down).
        KAFKA_LOG_DIRS: '/var/lib/kafka/data',
        KAFKA_NUM_PARTITIONS: '3',
        KAFKA_DEFAULT_REPLICATION_FACTOR: replication,
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: replication,
        KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '6',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: replication,
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: minIsr,
        KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '6',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_BROKER_SESSION_TIMEOUT_MS: String(session.timeoutMs),
        KAFKA_BROKER_HEARTBEAT_INTERVAL_MS: String(session.heartbeatMs),
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
        KAFKA_HEAP_OPTS: `-Xms${heap} -Xmx${heap}`,
      },
      ports: [{ container: port, host: port }],
      labels: { [stackLabel]: stack },
      ...(node === undefined ? {} : { network: clusterNetworkName(stack) }),
    },
    readiness:
      node === undefined
        ? { type: 'kafka', brokers: [brokers] }
        : { type: 'kafka', brokers: [brokers], nodeId },
    // The first start pulls the image.
    readyTimeoutMs: 120_000,
    stopSignal: 'SIGTERM',
    endpoints: { brokers, nodeId: String(nodeId) },
    ports: { kafka: port },
  };
}

/**
 * Kafka Connect as a distributed worker in a container of the image infra/connect/Dockerfile
 * builds (the local provider's jars, settings and logging). It runs on the Docker host's network:
 * the stack's clients are processes of this machine, and a relay registers its connector with
 * the database address it uses itself (127.0.0.1 and a published port), which is the container's
 * own loopback on any other network. Kafka's nodes are reached at the addresses they advertise
 * to those clients, and the REST API listens on the host's port `port`.
 */
export function defineDockerConnect(options: {
  stack: string;
  port: number;
  host: string;
  brokers: readonly string[];
  heapMb?: number;
}): ContainerRecord {
  const { stack, port } = options;
  const host = clientHost(options.host);
  const url = `http://${host}:${port}`;
  const settings = connectWorkerSettings({
    brokers: options.brokers,
    port,
    listenHost: '0.0.0.0',
    advertisedHost: host,
  });
  return {
    name: 'connect',
    kind: 'container',
    container: {
      ...connectImage(connectProjectDir()),
      name: containerName(stack, 'connect'),
      env: {
        ...connectWorkerEnv(settings),
        JVM_OPTS: serverJvmOptions(options.heapMb ?? connectHeapMb).join(' '),
      },
      ports: [],
      labels: { [stackLabel]: stack },
      hostNetwork: true,
    },
    // As the local provider's: the list of connectors answers once the worker has joined its
    // group. The first start builds the image (Maven resolves the jars) before this counts.
    readiness: { type: 'http', url: `${url}/connectors` },
    readyTimeoutMs: 120_000,
    stopSignal: 'SIGTERM',
    endpoints: { url },
    ports: { rest: port },
  };
}
