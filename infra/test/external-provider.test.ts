import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { InfraError, Stack } from '../src/index.ts';

// The run's own local stack plays "servers someone else runs".
const source = Stack.open(inject('stackName'));
const name = `external-${process.pid}`;

function externalEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    STACK_PROVIDER: 'external',
    DATABASE_URL: source.postgresUrl(),
    KAFKA_BROKERS: source.kafkaBrokers.join(','),
  };
}

async function failure(action: () => Promise<unknown>): Promise<InfraError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof InfraError) return error;
    throw error;
  }
  throw new Error('expected an InfraError');
}

describe('external provider', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await Stack.up({ name, env: externalEnv() });
  });
  afterAll(async () => {
    await Stack.open(name).down();
  });

  it('takes its endpoints from env and reports them as running', async () => {
    expect(stack.state.provider).toBe('external');
    expect(stack.kafkaBrokers).toEqual(source.kafkaBrokers);
    expect(stack.status().map((component) => [component.name, component.running])).toEqual([
      ['postgres', true],
      ['kafka', true],
    ]);
    const url = await stack.createDatabase('external_check');
    expect(new URL(url).pathname).toBe('/external_check');
  });

  it('refuses every chaos control with one clear message', async () => {
    for (const control of ['start', 'stop', 'kill', 'restart', 'wipe'] as const) {
      const error = await failure(() => stack[control]('kafka'));
      expect(error.code).toBe('UNSUPPORTED');
      expect(error.message).toContain('chaos controls need the local or docker provider');
    }
    expect(source.isRunning('kafka')).toBe(true);
  });

  it('keeps the provider a stack was created with', async () => {
    const error = await failure(() =>
      Stack.up({ name, env: { ...externalEnv(), STACK_PROVIDER: 'local' } }),
    );
    expect(error.message).toContain('runs on the external provider');
  });

  it('names the missing variable', async () => {
    const env = { ...process.env, STACK_PROVIDER: 'external', DATABASE_URL: '', KAFKA_BROKERS: '' };
    const error = await failure(() =>
      Stack.up({ name: `external-missing-${process.pid}`, servers: ['postgres'], env }),
    );
    expect(error.code).toBe('CONFIG_MISSING');
    expect(error.message).toContain('DATABASE_URL');
  });

  it('down forgets the servers without stopping them', async () => {
    const other = await Stack.up({ name: `external-down-${process.pid}`, env: externalEnv() });
    await other.down();
    expect(source.isRunning('postgres')).toBe(true);
    expect(source.isRunning('kafka')).toBe(true);
  });
});
