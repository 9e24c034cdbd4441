import net from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { InfraError, Stack, findFreePort } from '../src/index.ts';

/** These cases are about the local provider's own checks, whatever the machine has. */
const localEnv = { ...process.env, STACK_PROVIDER: 'local' };

async function upError(options: NonNullable<Parameters<typeof Stack.up>[0]>): Promise<InfraError> {
  try {
    await Stack.up({ env: localEnv, ...options });
  } catch (error) {
    if (error instanceof InfraError) return error;
    throw error;
  }
  throw new Error('Stack.up was expected to fail');
}

describe('clear errors', () => {
  it('names a taken port and the variable that moves it', async () => {
    const port = await findFreePort();
    const squatter = net.createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => squatter.once('listening', resolve));
    try {
      const error = await upError({
        name: `taken-${process.pid}`,
        servers: ['postgres'],
        ports: { postgres: port },
      });
      expect(error.code).toBe('PORT_TAKEN');
      expect(error.message).toContain(String(port));
      expect(error.hint).toContain('STACK_POSTGRES_PORT');
    } finally {
      squatter.close();
      await Stack.open(`taken-${process.pid}`).down();
    }
  });

  it('says when the PostgreSQL binaries are missing', async () => {
    const error = await upError({
      name: `no-pg-${process.pid}`,
      servers: ['postgres'],
      env: { ...localEnv, PG_BINDIR: '/nonexistent/bin' },
    });
    expect(error.code).toBe('POSTGRES_MISSING');
    expect(error.message).toContain('/nonexistent/bin');
  });

  it('says when Java is missing', async () => {
    const error = await upError({
      name: `no-java-${process.pid}`,
      servers: ['kafka'],
      env: { ...localEnv, JAVA_HOME: '/nonexistent/jdk' },
    });
    expect(error.code).toBe('JAVA_MISSING');
    expect(error.hint).toContain('JAVA_HOME');
  });

  it('refuses an unknown component by listing the known ones', () => {
    const stack = Stack.open(inject('stackName'));
    expect(() => stack.pid('zookeeper')).toThrow(/no component "zookeeper"/);
  });

  it('a process that exits during start-up fails its start at once, not at the readiness timeout', async () => {
    const stack = Stack.open(inject('stackName'));
    const port = await findFreePort();
    const name = `dies-at-start-${process.pid}`;
    const started = stack.addProcess({
      name,
      command: process.execPath,
      args: ['-e', 'process.exit(3)'],
      cwd: process.cwd(),
      env: {},
      readiness: { type: 'http', url: `http://127.0.0.1:${port}/` },
      // Longer than this test's own limit: only an early failure lets the test pass.
      readyTimeoutMs: 600_000,
    });
    await expect(started).rejects.toThrow(/exited during start-up/);
  }, 30_000);
});
