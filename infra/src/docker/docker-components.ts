import type { ComponentRecord } from '../state-file.ts';

/** Everything needed to create the container again from another shell (wipe, a removed container). */
export interface ContainerSpec {
  readonly image: string;
  /** Container name, so a person can `docker kill outbox-dev-kafka` by hand in a workshop. */
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  readonly command?: readonly string[];
  /** Fixed host ports: a recreated or restarted container keeps its address. */
  readonly ports: readonly { readonly container: number; readonly host: number }[];
  readonly labels: Readonly<Record<string, string>>;
}

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
}): ComponentRecord {
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
      command: [
        'postgres',
        '-c',
        'max_connections=300',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'shared_buffers=256MB',
      ],
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

/**
 * Apache Kafka 3.9 in KRaft combined mode. The broker listens inside the container on the same
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
}): ComponentRecord {
  const { stack, port } = options;
  const controllerPort = options.controllerPort ?? 9093;
  const brokers = `${clientHost(options.host)}:${port}`;
  const heap = `${options.heapMb ?? 512}m`;
  return {
    name: 'kafka',
    kind: 'container',
    container: {
      image: dockerImages.kafka,
      name: containerName(stack, 'kafka'),
      env: {
        CLUSTER_ID: 'b3V0Ym94LWluYm94LXN0YQ',
        KAFKA_NODE_ID: '1',
        KAFKA_PROCESS_ROLES: 'broker,controller',
        KAFKA_LISTENERS: `PLAINTEXT://:${port},CONTROLLER://:${controllerPort}`,
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${brokers}`,
        KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
        KAFKA_INTER_BROKER_LISTENER_NAME: 'PLAINTEXT',
        KAFKA_CONTROLLER_QUORUM_VOTERS: `1@localhost:${controllerPort}`,
        // A volume in the image: kept across restarts, dropped with the container (wipe, down).
        KAFKA_LOG_DIRS: '/var/lib/kafka/data',
        KAFKA_NUM_PARTITIONS: '3',
        KAFKA_DEFAULT_REPLICATION_FACTOR: '1',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
        KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '6',
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
        KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '6',
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
        KAFKA_HEAP_OPTS: `-Xms${heap} -Xmx${heap}`,
      },
      ports: [{ container: port, host: port }],
      labels: { [stackLabel]: stack },
    },
    readiness: { type: 'kafka', brokers: [brokers] },
    // The first start pulls the image.
    readyTimeoutMs: 120_000,
    stopSignal: 'SIGTERM',
    endpoints: { brokers },
    ports: { kafka: port },
  };
}
