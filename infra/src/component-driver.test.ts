import { describe, expect, it } from 'vitest';
import { controlsFor } from './component-driver.ts';
import type { ExternalRecord, ProcessRecord } from './component-record.ts';
import { defineDockerKafka } from './docker/docker-components.ts';
import { InfraError } from './errors.ts';

const external: ExternalRecord = {
  name: 'kafka',
  kind: 'external',
  readiness: { type: 'kafka', brokers: ['127.0.0.1:1'] },
  readyTimeoutMs: 1000,
  stopSignal: 'SIGTERM',
  endpoints: { brokers: '127.0.0.1:1' },
  ports: {},
};

describe('controlsFor', () => {
  it('refuses every chaos control on an external server', async () => {
    const controls = controlsFor(external);
    for (const control of ['start', 'stop', 'kill', 'wipe'] as const) {
      const error = await controls[control]().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InfraError);
      expect(String(error)).toContain(`cannot ${control} kafka`);
      expect(String(error)).toContain('chaos controls need the local or docker provider');
    }
    expect(await controls.remove()).toBe(external);
  });

  it('reports an external server that does not answer as not running', () => {
    expect(controlsFor(external).status(process.env)).toEqual({
      running: false,
      pid: undefined,
    });
  });

  it('reports a container that was never created as not running, without asking Docker', () => {
    const record = defineDockerKafka({ stack: 'unit', host: 'localhost', port: 1 });
    expect(controlsFor(record).status(process.env)).toEqual({
      running: false,
      pid: undefined,
    });
  });

  it('leaves down of a never-created container with nothing to do', async () => {
    const record = defineDockerKafka({ stack: 'unit', host: 'localhost', port: 1 });
    expect(await controlsFor(record).remove()).toBe(record);
  });

  it('refuses to wipe a local process without a data folder', async () => {
    const role: ProcessRecord = {
      ...external,
      name: 'relay',
      kind: 'process',
      launch: { command: 'node', args: [], cwd: '/', env: {}, logFile: '/dev/null' },
    };
    const error = await controlsFor(role)
      .wipe()
      .catch((caught: unknown) => caught);
    expect(String(error)).toContain('relay has no data folder to wipe');
  });
});
