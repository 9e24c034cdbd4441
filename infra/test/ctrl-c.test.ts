import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepoRoot, pollUntil, Stack } from '../src/index.ts';

const name = `ctrl-c-${process.pid}`;
afterEach(async () => {
  // A run that died halfway leaves its stack behind.
  await Stack.openIfExists(name)?.down();
});

// `pnpm dev` and `pnpm stack up` wait for Ctrl-C the same way (untilStopSignal); `stack up`
// is the lighter of the two. A terminal's Ctrl-C goes to the whole foreground process group:
// the test starts the command in a group of its own and signals that group, as a terminal does.
it('Ctrl-C on a foreground `./pnpm stack up` stops the stack and exits 0, without ELIFECYCLE', async () => {
  const root = findRepoRoot();
  const child = spawn('bash', [path.join(root, 'pnpm'), 'stack', 'up', `--name=${name}`], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );

  await pollUntil(() => stdout.includes('Ctrl-C stops everything.'), {
    timeoutMs: 150_000,
    description: `stack up to be ready (stdout: ${stdout}, stderr: ${stderr})`,
  });
  process.kill(-(child.pid ?? 0), 'SIGINT');

  expect(await exited).toEqual({ code: 0, signal: null });
  expect(stderr).not.toMatch(/ELIFECYCLE|Command failed/);
  expect(stdout).toContain('stopped');
  expect(Stack.openIfExists(name)).toBeUndefined();
});

describe('untilStopSignal', () => {
  const fixture = fileURLToPath(new URL('fixtures/stop-slowly.ts', import.meta.url));

  function startFixture(): {
    child: ChildProcessWithoutNullStreams;
    output: () => string;
    exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  } {
    const child = spawn(process.execPath, [fixture]);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, output: () => output, exited };
  }

  async function printed(output: () => string, text: string): Promise<void> {
    await pollUntil(() => output().includes(text), {
      timeoutMs: 10_000,
      description: `"${text}" (output so far: ${output()})`,
    });
  }

  // The second SIGINT of one Ctrl-C (pnpm forwards the terminal's) must not cut the shutdown short.
  it('ignores a repeated signal while stopping, and exits 0 once stopped', async () => {
    const { child, output, exited } = startFixture();
    await printed(output, 'waiting');
    child.kill('SIGINT');
    await printed(output, 'stopping on SIGINT');
    child.kill('SIGINT');
    await printed(output, 'repeat 2: SIGINT');
    child.stdin.write('done\n');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output()).toContain('stopped');
  });

  it('exits at once with 130 on a third signal (Ctrl-C pressed again)', async () => {
    const { child, output, exited } = startFixture();
    await printed(output, 'waiting');
    child.kill('SIGINT');
    await printed(output, 'stopping on SIGINT');
    child.kill('SIGINT');
    await printed(output, 'repeat 2');
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 130, signal: null });
    expect(output()).not.toContain('stopped');
  });
});
