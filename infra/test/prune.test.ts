import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot, Stack } from '../src/index.ts';
import { folderBytes, stackFolders } from '../src/prune.ts';
import { readState, stackDir, writeState } from '../src/state-file.ts';

// A folder of its own, so the test never prunes what other runs on this machine left behind.
const home = mkdtempSync(path.join(os.tmpdir(), 'prune-test-'));
const env = { ...process.env, STACK_HOME: home, STACK_PROVIDER: 'local' };
const hourAgo = new Date(Date.now() - 3_600_000);

/** Makes the stack's state file look an hour old: prune waits a minute for a stack that starts. */
function age(name: string): void {
  utimesSync(path.join(stackDir(name, env), 'state.json'), hourAgo, hourAgo);
}

/** `./pnpm stack prune` through the repository's wrapper, as a person types it. */
function pruneCommand(): string {
  const root = findRepoRoot();
  return execFileSync('bash', [path.join(root, 'pnpm'), 'stack', 'prune'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
}

describe('pnpm stack prune', () => {
  let leftoverFolders: string[];
  let leftoverBytes: number;

  beforeAll(async () => {
    // What a failed e2e run leaves: a stopped stack whose files were kept for a post-mortem.
    const failed = await Stack.up({ name: 'failed-run', servers: ['postgres'], env });
    await failed.down({ keepFiles: true });
    age('failed-run');
    const state = readState('failed-run', env);
    if (!state) throw new Error('the failed run left no state file');
    leftoverFolders = stackFolders(state, env);
    leftoverBytes = leftoverFolders.reduce((total, dir) => total + folderBytes(dir), 0);

    // Running, with no owner recorded (`stack up --detach`): only its components say it runs.
    await Stack.up({ name: 'detached', servers: ['postgres'], detached: true, env });
    age('detached');

    // Nothing runs yet, but its owner is alive: a stack in the middle of starting.
    writeState(
      {
        name: 'starting',
        provider: 'local',
        createdAt: new Date().toISOString(),
        ownerPid: process.pid,
        components: {},
      },
      env,
    );
    age('starting');
  }, 180_000);

  afterAll(async () => {
    await Stack.openIfExists('detached', env)?.down();
    await Stack.openIfExists('failed-run', env)?.down();
    rmSync(home, { recursive: true, force: true });
  });

  it('removes a stopped stack, says what it freed, and leaves running stacks alone', () => {
    expect(leftoverBytes).toBeGreaterThan(1024 * 1024);
    const printed = pruneCommand();

    expect(printed).toMatch(/removed \S*failed-run \(\d+(\.\d)? MB\)/);
    expect(printed).toMatch(/freed \d+(\.\d)? MB/);
    for (const folder of leftoverFolders) expect(existsSync(folder)).toBe(false);

    expect(printed).not.toMatch(/detached|starting/);
    expect(Stack.open('detached', env).isRunning('postgres')).toBe(true);
    expect(readState('starting', env)).toBeDefined();
  });

  it('says there is nothing to do when every stack runs', () => {
    expect(pruneCommand()).toContain('nothing to do');
    expect(Stack.open('detached', env).isRunning('postgres')).toBe(true);
  });
});
