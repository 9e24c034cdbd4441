import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { Stack, findFreePort, findRepoRoot } from '../src/index.ts';

/** A process that answers with the variable GREETING as it got it. */
const greeter = `
  require('node:http')
    .createServer((_, res) => res.end(process.env.GREETING ?? '(unset)'))
    .listen(Number(process.env.PORT), '127.0.0.1');
`;

const run = promisify(execFile);

/** `pnpm stack <args>` from a shell, on the test's stack: its output, and whether it failed. */
async function stackCli(...args: string[]): Promise<{ ok: boolean; output: string }> {
  const root = findRepoRoot();
  try {
    const { stdout, stderr } = await run(
      'bash',
      [path.join(root, 'pnpm'), 'stack', ...args, `--name=${inject('stackName')}`],
      { cwd: root },
    );
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

describe('pnpm stack start|restart <component> --env NAME=VALUE', () => {
  it('starts a role with the variable, keeps it for later starts, and NAME= removes it', async () => {
    const stack = Stack.open(inject('stackName'));
    const name = `greeter-${process.pid}`;
    const port = await findFreePort();
    const url = `http://127.0.0.1:${port}/`;
    await stack.addProcess({
      name,
      command: process.execPath,
      args: ['-e', greeter],
      cwd: process.cwd(),
      env: { PORT: String(port), GREETING: 'hello' },
      readiness: { type: 'http', url },
    });
    const greeting = async () => (await fetch(url)).text();
    try {
      expect(await greeting()).toBe('hello');

      expect(await stackCli('restart', name, '--env', 'GREETING=good day')).toMatchObject({
        ok: true,
      });
      expect(await greeting()).toBe('good day');

      // Kept in the state file: a start from anywhere (another shell, the dashboard) uses it.
      await stack.kill(name);
      await stack.start(name);
      expect(await greeting()).toBe('good day');

      await stack.stop(name);
      expect(await stackCli('start', name, '--env', 'GREETING=')).toMatchObject({ ok: true });
      expect(await greeting()).toBe('(unset)');
    } finally {
      await stack.stop(name);
    }
  });

  it('refuses it on a server, with another command, and without NAME=', async () => {
    const stack = Stack.open(inject('stackName'));
    const name = `greeter-refused-${process.pid}`;
    const port = await findFreePort();
    await stack.addProcess({
      name,
      command: process.execPath,
      args: ['-e', greeter],
      cwd: process.cwd(),
      env: { PORT: String(port) },
      readiness: { type: 'http', url: `http://127.0.0.1:${port}/` },
    });
    try {
      const onServer = await stackCli('restart', 'postgres', '--env', 'PGTZ=UTC');
      expect(onServer).toMatchObject({ ok: false });
      expect(onServer.output).toContain('postgres is a server');
      const withKill = await stackCli('kill', name, '--env', 'GREETING=hi');
      expect(withKill).toMatchObject({ ok: false });
      expect(withKill.output).toContain('--env goes with start or restart, not kill');
      const malformed = await stackCli('restart', name, '--env', 'GREETING');
      expect(malformed).toMatchObject({ ok: false });
      expect(malformed.output).toContain('--env takes NAME=VALUE, not "GREETING"');
      expect(stack.isRunning(name)).toBe(true);
    } finally {
      await stack.stop(name);
    }
  });
});
