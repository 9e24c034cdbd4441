/**
 * The rules of docs/rules.md that no behaviour test can show on its own: the partial indexes
 * the relay and the processor depend on, and where in the source some things may happen at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { findRepoRoot, Stack } from '@outbox-inbox/infra';
import { migrateService, services } from '@outbox-inbox/launcher';
import { paymentService } from '@outbox-inbox/payment-service';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
// Types `inject('stackName')`, provided by the infra package's global setup.
import type {} from '@outbox-inbox/infra/vitest-global-setup';

const root = findRepoRoot();

/** Every TypeScript source file (not tests) of the library and the services. */
function sourceFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(full);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
    });
  return ['packages', 'services'].flatMap((top) =>
    readdirSync(path.join(root, top)).flatMap((name) => {
      const src = path.join(root, top, name, 'src');
      try {
        return walk(src);
      } catch {
        return [];
      }
    }),
  );
}

function filesMatching(pattern: RegExp): string[] {
  return sourceFiles()
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file));
}

describe('R-DIST-OBX-1: the hot-set indexes exist, partial, as the guide gives them', () => {
  it('outbox_event(id) WHERE published_at IS NULL and inbox_event(received_at) WHERE NOT processed', async () => {
    const stack = Stack.open(inject('stackName'));
    const url = await stack.createDatabase('docs_rule_guards');
    // payment-service's own migrate program: the schema a deployment really gets.
    await migrateService(paymentService, url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ indexname: string; indexdef: string }>(
        `SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('outbox_event', 'inbox_event')`,
      );
      const definition = (name: string): string =>
        rows.find((row) => row.indexname === name)?.indexdef ?? '(missing)';
      expect(definition('ix_outbox_event_unpublished')).toMatch(
        /ON public\.outbox_event USING btree \(id\) WHERE \(published_at IS NULL\)/,
      );
      expect(definition('ix_inbox_event_unprocessed')).toMatch(
        /ON public\.inbox_event USING btree \(received_at\) WHERE \(NOT processed\)/,
      );
    } finally {
      await client.end();
    }
  });
});

describe('where things may happen, by source', () => {
  it('R-DIST-OBX-1: the relay claims with FOR UPDATE ... SKIP LOCKED', () => {
    expect(filesMatching(/FOR UPDATE OF o SKIP LOCKED/)).toContain(
      'packages/outbox/src/relay/claim-batch.ts',
    );
  });

  it('R-DIST-OBX-3: outbox rows are deleted only by the retention job, never because they were published', () => {
    // Retention deletes by a table name it is given (`sql.table`), outbox_event among them.
    expect(
      filesMatching(/DELETE FROM (outbox_event|\$\{sql\.table)|deleteFrom\(\s*'outbox_event'/),
    ).toEqual(['packages/outbox/src/ops/retention.ts']);
  });

  it('R-DIST-OBX-2: only the critical consumer (payment-service) runs an inbox; the rest dedup with processed_event', () => {
    /** The services whose source matches, one entry per matching file. */
    const callers = (pattern: RegExp): string[] =>
      filesMatching(pattern).flatMap((file) =>
        services
          .filter((service) => path.join(root, file).startsWith(service.directory))
          .map((service) => service.name),
      );
    expect(callers(/startInboxWriter\(/)).toEqual(['payment-service']);
    expect(callers(/startDedupConsumer\(/)).toEqual(['order-service']);
  });
});
