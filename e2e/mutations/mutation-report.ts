import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MutationOutcome } from './run-mutation.ts';

const reportDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../report');

/** Writes e2e/report/mutations.{json,md}; returns the Markdown table. */
export function writeMutationReport(outcomes: readonly MutationOutcome[]): string {
  const table = [
    '| mutation | breaks | killed (a test failed as a whole) | caught by | evidence | s |',
    '| --- | --- | --- | --- | --- | --- |',
    ...outcomes
      .map((o) =>
        [
          o.name,
          o.breaks,
          o.verdict === 'killed' ? 'yes' : `NO (${o.verdict})`,
          o.caughtBy ?? '',
          o.evidence ?? '',
          String(o.seconds),
        ]
          .map((cell) => cell.replaceAll('|', '\\|'))
          .join(' | '),
      )
      .map((row) => `| ${row} |`),
  ].join('\n');
  mkdirSync(reportDir, { recursive: true });
  writeFileSync(path.join(reportDir, 'mutations.json'), `${JSON.stringify(outcomes, null, 2)}\n`);
  writeFileSync(
    path.join(reportDir, 'mutations.md'),
    `# Mutations: latest run\n\n${new Date().toISOString()}\n\n${table}\n`,
  );
  return table;
}
