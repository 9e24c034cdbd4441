/**
 * No module imports itself through others: every folder of source reads in one direction.
 * A circle means two files that are one concept, or a type that lives on the wrong side.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findRepoRoot } from '@outbox-inbox/infra';
import { describe, expect, it } from 'vitest';

const root = findRepoRoot();

/** The source trees of every package, service and tool, relative to the repository root. */
function sourceTrees(): string[] {
  const nested = ['packages', 'services'].flatMap((top) =>
    readdirSync(path.join(root, top)).map((name) => path.join(top, name, 'src')),
  );
  return [...nested, 'infra/src', 'e2e/src', 'bench/src'].filter((tree) =>
    existsSync(path.join(root, tree)),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Relative imports and re-exports, type-only ones too: a circle of types is still a circle. */
export function relativeImports(file: string, source: string): string[] {
  return [...source.matchAll(/\b(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/g)].map(
    (match) => path.resolve(path.dirname(file), match[1] ?? ''),
  );
}

/** Every circle in the import graph, each as the files along it (depth-first, once per entry). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const circles: string[][] = [];
  const visit = (file: string, trail: string[]): void => {
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') circles.push([...trail.slice(trail.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next, trail);
    }
    trail.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file, []);
  return circles;
}

describe('imports', () => {
  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    expect(relativeImports('/x/src/a.ts', "import type { B } from './b.ts';")).toEqual([
      '/x/src/b.ts',
    ]);
  });

  it.each(sourceTrees())('form no circle in %s', (tree) => {
    const files = sourceFiles(path.join(root, tree));
    const graph = new Map(
      files.map((file) => [file, relativeImports(file, readFileSync(file, 'utf8'))]),
    );
    const circles = importCircles(graph).map((circle) =>
      circle.map((file) => path.relative(root, file)).join(' -> '),
    );
    expect(circles).toEqual([]);
  });
});
