import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findRepoRoot } from '@outbox-inbox/infra';
import { describe, expect, it } from 'vitest';

const rules = readFileSync(path.join(findRepoRoot(), 'docs', 'rules.md'), 'utf8');

/** The body rows of the first table under `## <heading>`, split into trimmed cells. */
function tableRows(heading: string): string[][] {
  const section = rules.split(/^## /m).find((part) => part.startsWith(heading));
  if (section === undefined) return [];
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // header and separator
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

const paths = (cell: string | undefined): string[] =>
  [...(cell ?? '').matchAll(/`([^`\s]+\/[^`\s]+)`/g)].map(([, found = '']) => found);
const isTest = (file: string): boolean => file.endsWith('.test.ts');

describe('docs/rules.md maps every rule of the style guide to code and to a test', () => {
  it('covers R-DIST-OBX-1..3, X1 and X2, each row with code and a test', () => {
    const rows = tableRows('The rules');
    expect(new Set(rows.map((row) => row[0]))).toEqual(
      new Set(['R-DIST-OBX-1', 'R-DIST-OBX-2', 'R-DIST-OBX-3', 'R-DIST-OBX-X1', 'R-DIST-OBX-X2']),
    );
    for (const [rule, , code, proof] of rows) {
      expect(
        paths(code).filter((file) => !isTest(file)),
        `${rule}: code`,
      ).not.toEqual([]);
      expect(paths(proof).filter(isTest), `${rule}: test`).not.toEqual([]);
    }
  });

  it('covers every row of the forbidden table, each with code and a test', () => {
    const rows = tableRows('The forbidden table');
    // The guide's table, in its order: the rule each forbidden pattern breaks.
    expect(rows.map((row) => row[1])).toEqual([
      'R-DIST-OBX-X1',
      'R-DIST-OBX-X2',
      'R-DIST-OBX-1',
      'R-DIST-OBX-1',
      'R-DIST-OBX-3',
      'R-DIST-OBX-2',
      'R-DIST-OBX-3',
    ]);
    for (const [forbidden, , , code, proof] of rows) {
      expect(
        paths(code).filter((file) => !isTest(file)),
        `${forbidden}: code`,
      ).not.toEqual([]);
      expect(paths(proof).filter(isTest), `${forbidden}: test`).not.toEqual([]);
    }
  });
});
