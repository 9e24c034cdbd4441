import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findRepoRoot } from '@outbox-inbox/infra';
import { afterAll, expect, it } from 'vitest';
import { applyEdits, EditDoesNotApply } from '../mutations/anchored-edits.ts';
import { mutations } from '../mutations/catalog.ts';

const run = promisify(execFile);
const root = findRepoRoot();

// A mutation that no longer applies would make `test:mutations` fail late, after the whole
// suite; this says so in a second, on every run.
it.each(mutations.map((mutation) => [mutation.name, mutation] as const))(
  'the mutation %s still applies to the source, and changes it',
  async (_name, mutation) => {
    if (mutation.edits) {
      const changed = applyEdits(root, mutation.edits, { write: false });
      expect(changed.size).toBeGreaterThan(0);
      for (const [file, text] of changed) expect(text).not.toBe(readFileSync(file, 'utf8'));
      return;
    }
    const excluded = (mutation.excludeFromPatch ?? []).map((file) => `--exclude=${file}`);
    const { stderr } = await run('git', ['apply', '--check', ...excluded, mutation.patch], {
      cwd: root,
    });
    expect(stderr).toBe('');
  },
);

// The anchors follow the code, and refuse loudly when it is gone: a tree of one file, moved
// and re-indented, then changed so that an anchor or its lines go.
const tree = mkdtempSync(path.join(os.tmpdir(), 'anchored-edits-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));
const write = (file: string, text: string) => {
  mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
  writeFileSync(path.join(tree, file), text);
};
const edit = {
  in: 'Relay.claim',
  find: ['if (held) return [];', 'return rows;'],
  replace: ['// MUTATION', 'return rows;'],
} as const;

it('an edit finds its declaration in whatever file it moved to, at whatever indentation', () => {
  write('services/a/src/old.ts', 'export const other = 1;\n');
  write(
    'packages/b/src/moved/relay.ts',
    'export class Relay {\n    claim(held: boolean, rows: number[]) {\n        if (held) return [];\n        return rows;\n    }\n}\n',
  );
  const changed = applyEdits(tree, [edit], { write: false });
  expect([...changed.values()]).toEqual([
    'export class Relay {\n    claim(held: boolean, rows: number[]) {\n        // MUTATION\n        return rows;\n    }\n}\n',
  ]);
});

it('an edit whose declaration is gone, doubled, or no longer holds its lines does not apply, and says why', () => {
  write('packages/b/src/moved/relay.ts', 'export function claim() {\n  return [];\n}\n');
  expect(() => applyEdits(tree, [edit], { write: false })).toThrow(
    new EditDoesNotApply('Relay.claim: 0 declarations of that name, not one'),
  );
  const relay =
    'export class Relay {\n  claim() {\n    if (held) return [];\n    return rows;\n  }\n}\n';
  write('packages/b/src/moved/relay.ts', relay);
  write('services/a/src/copy.ts', relay);
  expect(() => applyEdits(tree, [edit], { write: false })).toThrow(/2 declarations of that name/);
  rmSync(path.join(tree, 'services/a/src/copy.ts'));
  write(
    'packages/b/src/moved/relay.ts',
    relay.replace('if (held) return [];', 'if (held) return;'),
  );
  expect(() => applyEdits(tree, [edit], { write: false })).toThrow(/occur 0 times/);
});
