import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRepoRoot } from '../state-file.ts';
import {
  clientHost,
  clusterNetworkName,
  defineDockerConnect,
  defineDockerKafka,
  defineDockerPostgres,
} from './docker-components.ts';

describe('docker component records', () => {
  it('publishes Kafka on a fixed host port and advertises exactly that address', () => {
    const record = defineDockerKafka({ stack: 'dev', host: 'localhost', port: 19092 });
    expect(record.kind).toBe('container');
    expect(record.container?.image).toBe('apache/kafka:3.9.1');
    expect(record.container?.ports).toEqual([{ container: 19092, host: 19092 }]);
    expect(record.container?.env['KAFKA_ADVERTISED_LISTENERS']).toBe('PLAINTEXT://127.0.0.1:19092');
    expect(record.container?.env['KAFKA_PROCESS_ROLES']).toBe('broker,controller');
    expect(record.endpoints['brokers']).toBe('127.0.0.1:19092');
    expect(record.readiness).toEqual({ type: 'kafka', brokers: ['127.0.0.1:19092'] });
    expect(record.containerId).toBeUndefined();
  });

  it('gives Kafka a valid KRaft cluster id (16 bytes, base64url) and the asked heap', () => {
    const record = defineDockerKafka({ stack: 'dev', host: 'localhost', port: 1, heapMb: 256 });
    const clusterId = record.container?.env['CLUSTER_ID'] ?? '';
    expect(clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(clusterId, 'base64url')).toHaveLength(16);
    expect(record.container?.env['KAFKA_HEAP_OPTS']).toBe('-Xms256m -Xmx256m');
  });

  it('runs PostgreSQL 15 with trust auth on a fixed host port', () => {
    const record = defineDockerPostgres({ stack: 'dev', host: 'localhost', port: 55432 });
    expect(record.container?.image).toBe('postgres:15');
    expect(record.container?.ports).toEqual([{ container: 5432, host: 55432 }]);
    expect(record.endpoints['url']).toBe('postgres://postgres@127.0.0.1:55432/postgres');
    expect(record.container?.env['POSTGRES_HOST_AUTH_METHOD']).toBe('trust');
  });

  it('names and labels containers after the stack, so people can find them', () => {
    const record = defineDockerPostgres({ stack: 'test infra/1', host: 'localhost', port: 1 });
    expect(record.container?.name).toBe('outbox-test-infra-1-postgres');
    expect(record.container?.labels).toEqual({ 'outbox-inbox.stack': 'test infra/1' });
  });

  it('reaches a remote Docker host by its own name', () => {
    expect(clientHost('localhost')).toBe('127.0.0.1');
    expect(clientHost('docker.internal')).toBe('docker.internal');
  });

  it('gives each node of a cluster its name, node id, published port and the same voter set on one network', () => {
    const voters = [
      { nodeId: 1, controllerPort: 21001 },
      { nodeId: 2, controllerPort: 21002 },
      { nodeId: 3, controllerPort: 21003 },
    ];
    const nodes = voters.map((voter, index) =>
      defineDockerKafka({
        stack: 'ci 1',
        host: 'localhost',
        port: 19092 + 2 * index,
        controllerPort: voter.controllerPort,
        heapMb: 384,
        node: { name: `kafka-${voter.nodeId}`, nodeId: voter.nodeId, voters },
      }),
    );
    expect(nodes.map((node) => node.name)).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
    expect(nodes.map((node) => node.container.name)).toEqual([
      'outbox-ci-1-kafka-1',
      'outbox-ci-1-kafka-2',
      'outbox-ci-1-kafka-3',
    ]);
    const [second] = nodes.slice(1);
    const env = second?.container.env ?? {};
    expect(env['KAFKA_NODE_ID']).toBe('2');
    expect(env['KAFKA_CONTROLLER_QUORUM_VOTERS']).toBe(
      '1@outbox-ci-1-kafka-1:21001,2@outbox-ci-1-kafka-2:21002,3@outbox-ci-1-kafka-3:21003',
    );
    // Clients on the host reach the published port; the nodes replicate inside the network.
    expect(env['KAFKA_ADVERTISED_LISTENERS']).toBe(
      'PLAINTEXT://127.0.0.1:19094,INTERNAL://outbox-ci-1-kafka-2:9094',
    );
    expect(env['KAFKA_INTER_BROKER_LISTENER_NAME']).toBe('INTERNAL');
    expect(env['KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR']).toBe('3');
    expect(env['KAFKA_TRANSACTION_STATE_LOG_MIN_ISR']).toBe('2');
    expect(env['KAFKA_HEAP_OPTS']).toBe('-Xms384m -Xmx384m');
    expect(new Set(nodes.map((node) => node.container.network))).toEqual(
      new Set([clusterNetworkName('ci 1')]),
    );
    expect(new Set(nodes.map((node) => node.container.env['CLUSTER_ID'])).size).toBe(1);
    expect(second?.readiness).toEqual({ type: 'kafka', brokers: ['127.0.0.1:19094'], nodeId: 2 });
  });

  it('keeps a lone broker off any network, replicating its internal topics once', () => {
    const record = defineDockerKafka({ stack: 'dev', host: 'localhost', port: 19092 });
    expect(record.name).toBe('kafka');
    expect(record.container.network).toBeUndefined();
    expect(record.container.env['KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR']).toBe('1');
    expect(record.container.env['KAFKA_CONTROLLER_QUORUM_VOTERS']).toBe('1@localhost:9093');
  });

  it('runs Kafka Connect from the image infra/connect builds, on the host network, reached where the local one is', () => {
    const record = defineDockerConnect({
      stack: 'dev',
      host: 'localhost',
      port: 18083,
      brokers: ['127.0.0.1:19092'],
    });
    expect(record.name).toBe('connect');
    expect(record.container.name).toBe('outbox-dev-connect');
    expect(record.container.image).toMatch(/^outbox-inbox\/connect:[0-9a-f]{12}$/);
    expect(record.container.build).toEqual({
      context: path.join(findRepoRoot(), 'infra', 'connect'),
      dockerfile: 'Dockerfile',
    });
    // The relays register their connectors with 127.0.0.1 and PostgreSQL's published port.
    expect(record.container.hostNetwork).toBe(true);
    expect(record.container.network).toBeUndefined();
    expect(record.container.ports).toEqual([]);
    expect(record.container.env).toEqual({
      CONNECT_BOOTSTRAP_SERVERS: '127.0.0.1:19092',
      CONNECT_LISTENERS: 'http://0.0.0.0:18083',
      CONNECT_REST_ADVERTISED_HOST_NAME: '127.0.0.1',
      CONNECT_REST_ADVERTISED_PORT: '18083',
      CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR: '1',
      CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR: '1',
      CONNECT_STATUS_STORAGE_REPLICATION_FACTOR: '1',
      JVM_OPTS:
        '-Xms384m -Xmx384m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true',
    });
    expect(record.endpoints['url']).toBe('http://127.0.0.1:18083');
    expect(record.ports).toEqual({ rest: 18083 });
    expect(record.readiness).toEqual({ type: 'http', url: 'http://127.0.0.1:18083/connectors' });
  });

  it("gives a cluster's Kafka Connect every node and three replicas of its topics", () => {
    const brokers = ['127.0.0.1:19092', '127.0.0.1:19094', '127.0.0.1:19096'];
    const record = defineDockerConnect({ stack: 'ci 1', host: 'localhost', port: 1, brokers });
    const env = record.container.env;
    expect(env['CONNECT_BOOTSTRAP_SERVERS']).toBe(brokers.join(','));
    expect(env['CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR']).toBe('3');
    expect(env['CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR']).toBe('3');
    expect(env['CONNECT_STATUS_STORAGE_REPLICATION_FACTOR']).toBe('3');
    expect(record.container.labels).toEqual({ 'outbox-inbox.stack': 'ci 1' });
  });

  it('reaches a remote Docker host by its name for Kafka Connect too', () => {
    const record = defineDockerConnect({
      stack: 'dev',
      host: 'docker.internal',
      port: 18083,
      brokers: ['docker.internal:19092'],
      heapMb: 256,
    });
    expect(record.endpoints['url']).toBe('http://docker.internal:18083');
    expect(record.container.env['CONNECT_REST_ADVERTISED_HOST_NAME']).toBe('docker.internal');
    expect(record.container.env['JVM_OPTS']).toMatch(/^-Xms256m -Xmx256m /);
  });
});
