import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findRepoRoot } from '@outbox-inbox/infra';
import { describe, expect, it } from 'vitest';
import { checkedMarkdownFiles, missing, pathReferences } from './support/doc-paths.ts';

const root = findRepoRoot();

describe('paths named by the docs', () => {
  it('finds backticked repo paths and relative links, and reports the ones that do not exist', () => {
    const file = path.join(root, 'docs', 'example.md');
    const references = pathReferences(
      root,
      file,
      [
        'See `packages/outbox/src/relay/claim-batch.ts` and [the README](../README.md#quick-start).',
        'Not paths: `outbox_event`, `pnpm test`, [a site](https://kafka.apache.org), `services/<name>/src`.',
        'Gone: `packages/outbox/src/relay/no-such-file.ts`, [a page](no-such-page.md).',
        '```sh',
        'cat packages/not/checked/in/code/blocks.ts',
        '```',
      ].join('\n'),
    );
    expect(references.map((reference) => reference.target)).toEqual([
      'packages/outbox/src/relay/claim-batch.ts',
      '../README.md',
      'packages/outbox/src/relay/no-such-file.ts',
      'no-such-page.md',
    ]);
    expect(missing(references).map((reference) => reference.target)).toEqual([
      'packages/outbox/src/relay/no-such-file.ts',
      'no-such-page.md',
    ]);
  });

  it.each(checkedMarkdownFiles(root).map((file) => [path.relative(root, file), file]))(
    '%s names only paths that exist',
    (_name, file) => {
      const references = pathReferences(root, file, readFileSync(file, 'utf8'));
      const broken = missing(references).map(
        (reference) =>
          `${path.relative(root, reference.file)}:${reference.line} ${reference.target}`,
      );
      expect(broken).toEqual([]);
    },
  );
});
