import { describe, expect, it } from 'vitest';
import { driverFor } from './component-driver.ts';
import { defineDockerKafka } from './docker/docker-components.ts';
import { InfraError } from './errors.ts';
import type { ComponentRecord } from './state-file.ts';

const external: ComponentRecord = {
  name: 'kafka',
  kind: 'external',
  readiness: { type: 'kafka', brokers: ['127.0.0.1:1'] },
  readyTimeoutMs: 1000,
  stopSignal: 'SIGTERM',
  endpoints: { brokers: '127.0.0.1:1' },
  ports: {},
};

describe('driverFor', () => {
  it('refuses every chaos control on an external server', async () => {
    const driver = driverFor(external);
    for (const control of ['start', 'stop', 'kill', 'wipe'] as const) {
      const error = await driver[control](external).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InfraError);
      expect(String(error)).toContain(`cannot ${control} kafka`);
      expect(String(error)).toContain('chaos controls need the local or docker provider');
    }
    expect(await driver.remove(external)).toBe(external);
  });

  it('reports an external server that does not answer as not running', () => {
    expect(driverFor(external).status(external, process.env)).toEqual({
      running: false,
      pid: undefined,
    });
  });

  it('reports a container that was never created as not running, without asking Docker', () => {
    const record = defineDockerKafka({ stack: 'unit', host: 'localhost', port: 1 });
    expect(driverFor(record).status(record, process.env)).toEqual({
      running: false,
      pid: undefined,
    });
  });

  it('leaves down of a never-created container with nothing to do', async () => {
    const record = defineDockerKafka({ stack: 'unit', host: 'localhost', port: 1 });
    expect(await driverFor(record).remove(record)).toBe(record);
  });

  it('refuses to wipe a local process without a data folder', async () => {
    const role: ComponentRecord = { ...external, name: 'relay', kind: 'process' };
    const error = await driverFor(role)
      .wipe(role)
      .catch((caught: unknown) => caught);
    expect(String(error)).toContain('relay has no data folder to wipe');
  });
});
