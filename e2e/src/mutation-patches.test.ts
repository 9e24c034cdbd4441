import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findRepoRoot } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { mutations } from '../mutations/catalog.ts';

const run = promisify(execFile);

// A patch that no longer applies would make `test:mutations` fail late, after the whole suite;
// this says so in a second, on every run.
it.each(mutations.map((mutation) => [mutation.name, mutation] as const))(
  'the mutation %s still applies to the source',
  async (_name, mutation) => {
    const excluded = (mutation.excludeFromPatch ?? []).map((file) => `--exclude=${file}`);
    const { stderr } = await run('git', ['apply', '--check', ...excluded, mutation.patch], {
      cwd: findRepoRoot(),
    });
    expect(stderr).toBe('');
  },
);
