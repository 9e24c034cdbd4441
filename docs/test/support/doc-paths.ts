import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Top-level folders and files of the repo: a backticked token starting with one is a path. */
const ROOTS = [
  'packages/',
  'services/',
  'infra/',
  'e2e/',
  'bench/',
  'docs/',
  'scripts/',
  '.ci/',
  'README.md',
  'package.json',
  'pnpm-workspace.yaml',
  'turbo.json',
  'eslint.config.js',
  'tsconfig.base.json',
];

export interface PathReference {
  readonly file: string;
  readonly line: number;
  readonly target: string;
  /** Absolute path the reference must resolve to. */
  readonly resolved: string;
}

const codeSpan = /`([^`\s]+)`/g;
const markdownLink = /\]\(([^)\s]+)\)/g;

function looksLikeRepoPath(token: string): boolean {
  return ROOTS.some((root) => token === root || token.startsWith(root));
}

/**
 * The repo paths a markdown file names: backticked tokens that start at a top-level folder
 * (relative to the repo root) and relative markdown links (relative to the file). URLs,
 * anchors and `<placeholder>` paths are left alone. A trailing `#anchor` is ignored.
 */
export function pathReferences(repoRoot: string, file: string, markdown: string): PathReference[] {
  const found: PathReference[] = [];
  const lines = markdown.split('\n');
  let fenced = false;
  lines.forEach((text, index) => {
    if (text.trimStart().startsWith('```')) {
      fenced = !fenced;
      return;
    }
    // Code blocks hold commands and SQL, whose tokens are not necessarily repo paths.
    if (fenced) return;
    for (const [, token = ''] of text.matchAll(codeSpan)) {
      const target = token.replace(/#.*$/, '').replace(/[.,:;]$/, '');
      if (!looksLikeRepoPath(target) || /[<>*{}$]/.test(target)) continue;
      found.push({ file, line: index + 1, target, resolved: path.join(repoRoot, target) });
    }
    for (const [, link = ''] of text.matchAll(markdownLink)) {
      if (/^[a-z]+:/i.test(link) || link.startsWith('#')) continue;
      const target = link.replace(/#.*$/, '');
      found.push({
        file,
        line: index + 1,
        target,
        resolved: path.resolve(path.dirname(file), target),
      });
    }
  });
  return found;
}

/** The markdown files whose paths CI checks: the root README and everything under docs/. */
export function checkedMarkdownFiles(repoRoot: string): string[] {
  const docs = path.join(repoRoot, 'docs');
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(full);
      return entry.name.endsWith('.md') ? [full] : [];
    });
  return [path.join(repoRoot, 'README.md'), ...walk(docs)];
}

export function missing(references: readonly PathReference[]): PathReference[] {
  return references.filter((reference) => !existsSync(reference.resolved));
}
