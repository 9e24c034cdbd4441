/**
 * The conventions the executable-docs test reads documents by: which blocks run, what each
 * promises, and how a promise is matched. A convention that silently matched nothing would
 * let a drifted document pass.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { commandBlocks, outputsByBlock, printed, sessionScript } from './support/doc-blocks.ts';

const doc = [
  '# Title',
  '## Setup',
  '<!-- not run by the docs test: starts the system -->',
  '',
  '```sh',
  './pnpm dev',
  '```',
  '',
  'You should see `never checked`.',
  '## Exercise',
  '```sh',
  'id=$(./wk orders 1)',
  '```',
  '',
  'Some prose first.',
  '',
  '**You should see** `1 order(s) PAID` and',
  '`event … delivered 2x`.',
  '',
  'Later prose with `not expected`.',
  '```ts',
  'const notShell = true;',
  '```',
  '   ```sh',
  '   echo indented',
  '   ```',
].join('\n');

describe('commandBlocks', () => {
  const blocks = commandBlocks(doc);

  it('finds the sh blocks only, with their line and section, dedented', () => {
    expect(blocks.map((b) => [b.line, b.section, b.commands])).toEqual([
      [5, 'Setup', './pnpm dev'],
      [11, 'Exercise', 'id=$(./wk orders 1)'],
      [24, 'Exercise', 'echo indented'],
    ]);
  });

  it('marks the block right after the not-run comment, and only that one', () => {
    expect(blocks.map((b) => b.notRun)).toEqual(['starts the system', undefined, undefined]);
  });

  it('reads the backticked text of the "You should see" paragraph after a block', () => {
    expect(blocks[1]?.expected).toEqual(['1 order(s) PAID', 'event … delivered 2x']);
    expect(blocks[2]?.expected).toEqual([]);
  });

  it('keeps only the blocks of the section asked for', () => {
    expect(commandBlocks(doc, 'Exercise').map((b) => b.line)).toEqual([11, 24]);
    expect(commandBlocks(doc, 'No such section')).toEqual([]);
  });
});

describe('printed', () => {
  it('matches literally, with … standing for anything on one line', () => {
    expect(printed('  event 9f2c delivered 2x (0/1, 0/2)', 'event … delivered 2x')).toBe(true);
    expect(printed('order(s) PAID', '1 order(s) PAID')).toBe(false);
    expect(printed('event 9f2c\ndelivered 2x', 'event … delivered 2x')).toBe(false);
    expect(printed('a+b (c)', 'a+b (c)')).toBe(true);
  });
});

describe('sessionScript and outputsByBlock', () => {
  const run = (markdown: string) => {
    const blocks = commandBlocks(markdown);
    const result = spawnSync('bash', ['-c', sessionScript(blocks)], { encoding: 'utf8' });
    return { code: result.status, outputs: outputsByBlock(result.stdout, blocks.length) };
  };

  it("runs the blocks in one session and splits the transcript into each block's output", () => {
    const { code, outputs } = run(
      ['```sh', 'x=1', 'echo one $x', '```', '```sh', 'echo two $x >&2', '```'].join('\n'),
    );
    expect(code).toBe(0);
    expect(outputs).toEqual(['one 1', 'two 1']);
  });

  it('stops at the first failing command; the last output is the failing block', () => {
    const { code, outputs } = run(
      [
        '```sh',
        'echo fine',
        '```',
        '```sh',
        'false',
        'echo not reached',
        '```',
        '```sh',
        'echo never',
        '```',
      ].join('\n'),
    );
    expect(code).toBe(1);
    expect(outputs).toEqual(['fine', '']);
  });
});
