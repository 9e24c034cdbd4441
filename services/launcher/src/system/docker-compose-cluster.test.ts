import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  connectImageName,
  connectWorkerEnv,
  connectWorkerSettings,
  devPorts,
} from '@outbox-inbox/infra';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// No Docker engine runs where this suite runs: this reads infra/docker-compose.cluster.yml and
// holds it to the shape `pnpm stack up --kafka-brokers 3` gives the local provider.

interface KafkaNodeService {
  readonly image?: string;
  readonly ports?: string[];
  readonly environment?: Record<string, string | number>;
}

interface ConnectService {
  readonly profiles?: string[];
  readonly image?: string;
  readonly build?: { context: string };
  readonly network_mode?: string;
  readonly environment?: Record<string, string>;
  readonly depends_on?: Record<string, { condition: string }>;
  readonly healthcheck?: { test: string[] };
}

const root = path.resolve(import.meta.dirname, '../../../..');
const compose = parse(
  readFileSync(path.join(root, 'infra/docker-compose.cluster.yml'), 'utf8'),
  // The nodes share their settings through YAML merge keys (`<<: *kafka-env`).
  { merge: true },
) as { services: Record<string, KafkaNodeService & ConnectService> };

const nodeNames = ['kafka-1', 'kafka-2', 'kafka-3'];

function node(name: string): KafkaNodeService & { environment: Record<string, string> } {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`infra/docker-compose.cluster.yml has no ${name}`);
  const environment = Object.fromEntries(
    Object.entries(found.environment ?? {}).map(([key, value]) => [key, String(value)]),
  );
  return { ...found, environment };
}

describe('infra/docker-compose.cluster.yml', () => {
  it('runs three Kafka nodes, each broker and controller, voting as one static set', () => {
    expect(Object.keys(compose.services).filter((name) => name.startsWith('kafka'))).toEqual(
      nodeNames,
    );
    const voters = nodeNames.map((name, index) => `${index + 1}@${name}:9093`).join(',');
    const clusterIds = new Set<string | undefined>();
    for (const [index, name] of nodeNames.entries()) {
      const { environment, image } = node(name);
      expect(image, name).toMatch(/^apache\/kafka:3\.9\./);
      expect(environment['KAFKA_NODE_ID'], name).toBe(String(index + 1));
      expect(environment['KAFKA_PROCESS_ROLES'], name).toBe('broker,controller');
      expect(environment['KAFKA_CONTROLLER_QUORUM_VOTERS'], name).toBe(voters);
      clusterIds.add(environment['CLUSTER_ID']);
    }
    expect(clusterIds.size).toBe(1);
  });

  it('publishes the dev cluster ports, stepped by two per node, as the local provider does', () => {
    for (const [index, name] of nodeNames.entries()) {
      const port = devPorts({}).kafka + 2 * index;
      const { ports, environment } = node(name);
      expect(ports, name).toEqual([`${port}:${port}`]);
      expect(environment['KAFKA_ADVERTISED_LISTENERS'], name).toContain(
        `PLAINTEXT://127.0.0.1:${port}`,
      );
    }
  });

  it('replicates as production does and creates no topic on its own', () => {
    for (const name of nodeNames) {
      const { environment } = node(name);
      expect(environment, name).toMatchObject({
        KAFKA_DEFAULT_REPLICATION_FACTOR: '3',
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '3',
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '2',
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
        KAFKA_HEAP_OPTS: '-Xms384m -Xmx384m',
      });
    }
  });

  it('runs Kafka Connect (profile cdc) as the docker provider does, for services on this machine', () => {
    const connect = compose.services['connect'];
    const ports = devPorts({});
    expect(connect).toMatchObject({
      profiles: ['cdc'],
      image: connectImageName,
      build: { context: 'connect' },
      // A relay registers its connector with its own DATABASE_URL, 127.0.0.1:<port>.
      network_mode: 'host',
      depends_on: Object.fromEntries(
        nodeNames.map((name) => [name, { condition: 'service_healthy' }]),
      ),
    });
    const place = {
      brokers: nodeNames.map((_, index) => `127.0.0.1:${ports.kafka + 2 * index}`),
      port: ports.connect,
      listenHost: '0.0.0.0',
      advertisedHost: '127.0.0.1',
    };
    expect(connect?.environment).toEqual(connectWorkerEnv(connectWorkerSettings(place)));
    expect(connect?.healthcheck?.test.join(' ')).toContain(
      `http://127.0.0.1:${ports.connect}/connectors`,
    );
  });
});
