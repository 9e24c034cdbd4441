import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { findRepoRoot } from '../src/index.ts';

describe('pnpm stack status --json', () => {
  // `./pnpm stack status --json | jq .` is what the README suggests: nothing but JSON on stdout.
  it('prints only JSON on standard output, through the repository’s pnpm wrapper', () => {
    const root = findRepoRoot();
    const stdout = execFileSync(
      'bash',
      [path.join(root, 'pnpm'), 'stack', 'status', '--json', `--name=${inject('stackName')}`],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const status = JSON.parse(stdout) as { name: string; components: { name: string }[] };
    expect(status.name).toBe(inject('stackName'));
    // Other files of this run may add components to the shared stack (clear-errors adds a
    // process that dies at start): the servers must be there, whatever else is.
    expect(status.components.map((c) => c.name)).toEqual(
      expect.arrayContaining(['kafka', 'postgres']),
    );
  });
});

describe('pnpm stack down', () => {
  // Down is where a stack should end up: a teardown that runs twice must not fail the second time.
  it('on a stack that does not exist says there is nothing to do and exits 0', () => {
    const root = findRepoRoot();
    const name = `never-started-${process.pid}`;
    const stdout = execFileSync(
      'bash',
      [path.join(root, 'pnpm'), 'stack', 'down', `--name=${name}`],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(stdout).toContain(`no stack named "${name}" is running: nothing to do`);
  });
});
