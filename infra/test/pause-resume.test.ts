import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { Stack, findFreePort, findRepoRoot, pollUntil } from '../src/index.ts';

/** A process that answers how many ticks it has counted, and says goodbye on SIGTERM. */
const ticker = `
  let ticks = 0;
  setInterval(() => ticks++, 20);
  const server = require('node:http').createServer((_, res) => res.end(String(ticks)));
  server.listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => { console.log('stopped gracefully'); process.exit(0); });
`;

async function addTicker(stack: Stack, name: string): Promise<string> {
  const port = await findFreePort();
  const url = `http://127.0.0.1:${port}/`;
  await stack.addProcess({
    name,
    command: process.execPath,
    args: ['-e', ticker],
    cwd: process.cwd(),
    env: { PORT: String(port) },
    readiness: { type: 'http', url },
  });
  return url;
}

/** The ticks it answers, or undefined when it does not answer within half a second. */
async function ticks(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(500) });
    return Number(await response.text());
  } catch {
    return undefined;
  }
}

/** The kernel's word on the process: `T` is stopped by a signal. */
function processState(pid: number | undefined): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
}

/** A process whose child leaves its process group, as each PostgreSQL backend does (setsid). */
const parentOfDetached = `
  const child = require('node:child_process').spawn(
    process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  console.log('child pid ' + child.pid);
  require('node:http').createServer((_, res) => res.end('ok'))
    .listen(Number(process.env.PORT), '127.0.0.1');
`;

/**
 * A signal is delivered asynchronously: right after `kill()` the process may still show as
 * running (R) for a moment. Waits, with a deadline, for the state the signal leads to.
 */
async function stateBecomes(
  pid: number | undefined,
  expected: string | ((state: string | undefined) => boolean),
): Promise<void> {
  const matches =
    typeof expected === 'string' ? (state: string | undefined) => state === expected : expected;
  await pollUntil(() => matches(processState(pid)) || undefined, {
    timeoutMs: 5000,
    intervalMs: 20,
    description: `process ${pid} to reach the state the signal leads to`,
  });
}

const statusOf = (stack: Stack, name: string) => stack.status().find((c) => c.name === name);

describe('pause and resume', () => {
  it('freeze a component (alive, answering nothing, shown as paused) and thaw it where it was', async () => {
    const stack = Stack.open(inject('stackName'));
    // A name like a cluster node's: nothing about pause depends on the component's name.
    const name = `node-1-${process.pid}`;
    const url = await addTicker(stack, name);
    try {
      stack.pause(name);
      expect(statusOf(stack, name)).toMatchObject({ running: true, paused: true });
      await stateBecomes(stack.pid(name), 'T');
      expect(await ticks(url)).toBeUndefined();

      stack.resume(name);
      expect(statusOf(stack, name)).toMatchObject({ running: true, paused: false });
      await pollUntil(async () => (await ticks(url)) !== undefined, {
        timeoutMs: 10_000,
        description: 'the ticker to answer again',
      });
    } finally {
      await stack.stop(name);
    }
  });

  it('reach the processes that left the group (PostgreSQL backends call setsid)', async () => {
    const stack = Stack.open(inject('stackName'));
    const name = `leaves-group-${process.pid}`;
    const port = await findFreePort();
    await stack.addProcess({
      name,
      command: process.execPath,
      args: ['-e', parentOfDetached],
      cwd: process.cwd(),
      env: { PORT: String(port) },
      readiness: { type: 'http', url: `http://127.0.0.1:${port}/` },
    });
    const childPid = await pollUntil(
      () => /child pid (\d+)/.exec(readFileSync(stack.logFile(name) ?? '', 'utf8'))?.[1],
      { timeoutMs: 10_000, description: 'the child to be started' },
    ).then(Number);
    try {
      stack.pause(name);
      await stateBecomes(childPid, 'T');
      stack.resume(name);
      await stateBecomes(childPid, (state) => state !== 'T');
    } finally {
      process.kill(childPid, 'SIGKILL');
      await stack.stop(name);
    }
  });

  it('stop a paused component gracefully: it is thawed first, so it gets its SIGTERM', async () => {
    const stack = Stack.open(inject('stackName'));
    const name = `frozen-then-stopped-${process.pid}`;
    await addTicker(stack, name);
    stack.pause(name);
    await stack.stop(name);
    expect(statusOf(stack, name)).toMatchObject({ running: false, paused: false });
    expect(readFileSync(stack.logFile(name) ?? '', 'utf8')).toContain('stopped gracefully');
  }, 60_000);

  it('from a shell: `pnpm stack pause|resume <component>`, and `status --json` says paused', async () => {
    const stack = Stack.open(inject('stackName'));
    const name = `cli-paused-${process.pid}`;
    const url = await addTicker(stack, name);
    const root = findRepoRoot();
    const stackCli = (...args: string[]): string =>
      execFileSync('bash', [path.join(root, 'pnpm'), 'stack', ...args, `--name=${stack.name}`], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const pausedInJson = (): boolean | undefined =>
      (
        JSON.parse(stackCli('status', '--json')) as {
          components: { name: string; paused: boolean }[];
        }
      ).components.find((c) => c.name === name)?.paused;
    try {
      expect(stackCli('pause', name)).toContain('paused (SIGSTOP)');
      expect(pausedInJson()).toBe(true);
      expect(stackCli('status')).toMatch(new RegExp(`${name}\\s+paused`));
      expect(await ticks(url)).toBeUndefined();
      expect(stackCli('resume', name)).toContain('resumed (SIGCONT)');
      expect(pausedInJson()).toBe(false);
      await pollUntil(async () => (await ticks(url)) !== undefined, {
        timeoutMs: 10_000,
        description: 'the ticker to answer again',
      });
    } finally {
      await stack.stop(name);
    }
  }, 60_000);
});
