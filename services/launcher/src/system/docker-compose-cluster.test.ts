import { readFileSync } from 'node:fs';
import path from 'node:path';
import { devPorts } from '@outbox-inbox/infra';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// No Docker engine runs where this suite runs: this reads infra/docker-compose.cluster.yml and
// holds it to the shape `pnpm stack up --kafka-brokers 3` gives the local provider.

interface KafkaNodeService {
  readonly image?: string;
  readonly ports?: string[];
  readonly environment?: Record<string, string | number>;
}

const root = path.resolve(import.meta.dirname, '../../../..');
const compose = parse(
  readFileSync(path.join(root, 'infra/docker-compose.cluster.yml'), 'utf8'),
  // The nodes share their settings through YAML merge keys (`<<: *kafka-env`).
  { merge: true },
) as { services: Record<string, KafkaNodeService> };

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
});
