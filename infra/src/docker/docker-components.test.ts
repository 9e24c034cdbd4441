import { describe, expect, it } from 'vitest';
import { clientHost, defineDockerKafka, defineDockerPostgres } from './docker-components.ts';

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
});
