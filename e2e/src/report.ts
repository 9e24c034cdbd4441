import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What one scenario measured: the counts that show the faults really happened. */
export interface ScenarioCounts {
  readonly scenario: string;
  readonly ordersAccepted: number;
  readonly ordersRefused: number;
  readonly eventsPublished: number;
  readonly duplicatesDelivered: number;
  readonly duplicatesDroppedByInbox: number;
  readonly duplicatesDroppedByDedup: number;
  /** Unpublished outbox rows at most; null in CDC mode, where no row is marked published. */
  readonly largestBacklog: number | null;
  readonly drainSeconds: number;
  /**
   * Seconds from the last fault (the last one the scenario noted or a process injected) to
   * every accepted order settled; null when nothing was broken.
   */
  readonly recoverySeconds: number | null;
  readonly faults: readonly string[];
  /** The whole test passed: its invariants and every assertion after them. */
  readonly passed: boolean;
}

/** One row of the report: a scenario that stopped before measuring has no counts (null). */
export type ReportRow = {
  readonly [K in keyof ScenarioCounts]: K extends 'scenario' | 'faults' | 'passed'
    ? ScenarioCounts[K]
    : ScenarioCounts[K] | null;
};

/**
 * The row of a scenario that threw before it could count (a drain past its bound, a fault that
 * never landed): the faults it had injected, and why it stopped.
 */
export function abortedRow(scenario: string, faults: readonly string[], error: unknown): ReportRow {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = (message.split('\n')[0] ?? '').slice(0, 200);
  return {
    scenario,
    ordersAccepted: null,
    ordersRefused: null,
    eventsPublished: null,
    duplicatesDelivered: null,
    duplicatesDroppedByInbox: null,
    duplicatesDroppedByDedup: null,
    largestBacklog: null,
    drainSeconds: null,
    recoverySeconds: null,
    faults: [...faults, `stopped: ${firstLine}`],
    passed: false,
  };
}

const reportDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../report');

/** Where the counts go: JSON for machines, Markdown for people. */
export const reportFiles = Object.freeze({
  json: path.join(reportDir, 'latest.json'),
  markdown: path.join(reportDir, 'latest.md'),
  /**
   * One file per scenario, so that two vitest runs at once (`./pnpm test` runs the scenarios
   * in two stages) never overwrite each other's rows; latest.* are made from these.
   */
  rows: path.join(reportDir, 'rows'),
});

/** Starts a report with no rows (a vitest run's global set-up; `./pnpm test` once for both). */
export function clearReport(): void {
  rmSync(reportFiles.rows, { recursive: true, force: true });
  rmSync(reportFiles.json, { force: true });
  rmSync(reportFiles.markdown, { force: true });
}

const columns: readonly [keyof ReportRow, string][] = [
  ['scenario', 'scenario'],
  ['ordersAccepted', 'orders accepted'],
  ['ordersRefused', 'refused'],
  ['eventsPublished', 'events published'],
  ['duplicatesDelivered', 'duplicates delivered'],
  ['duplicatesDroppedByInbox', 'dropped by inbox'],
  ['duplicatesDroppedByDedup', 'dropped by dedup'],
  ['largestBacklog', 'largest backlog'],
  ['drainSeconds', 'drain s'],
  ['recoverySeconds', 'recovery s'],
  ['faults', 'faults injected'],
  ['passed', 'test'],
];

function cell(value: ReportRow[keyof ReportRow]): string {
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'boolean') return value ? 'passed' : 'FAILED';
  if (value === null) return '-';
  return String(value);
}

export function markdownTable(rows: readonly ReportRow[]): string {
  const header = `| ${columns.map(([, title]) => title).join(' | ')} |`;
  const rule = `| ${columns.map(() => '---').join(' | ')} |`;
  const body = rows.map((row) => `| ${columns.map(([key]) => cell(row[key])).join(' | ')} |`);
  return [header, rule, ...body].join('\n');
}

/**
 * Records one scenario's counts, then rewrites e2e/report/latest.json and latest.md from every
 * scenario recorded since the report was cleared.
 */
export function recordScenario(counts: ReportRow): void {
  mkdirSync(reportFiles.rows, { recursive: true });
  const file = `${counts.scenario.replaceAll(/[^a-z0-9]+/gi, '-').toLowerCase()}.json`;
  writeFileSync(path.join(reportFiles.rows, file), `${JSON.stringify(counts, null, 2)}\n`);
  writeReport();
}

/** latest.json and latest.md, from the rows recorded so far (none: no file). */
export function writeReport(): void {
  let files: string[];
  try {
    files = readdirSync(reportFiles.rows).filter((name) => name.endsWith('.json'));
  } catch {
    return;
  }
  const rows = files
    .map((name) => JSON.parse(readFileSync(path.join(reportFiles.rows, name), 'utf8')) as ReportRow)
    .sort((a, b) => a.scenario.localeCompare(b.scenario));
  writeFileSync(reportFiles.json, `${JSON.stringify(rows, null, 2)}\n`);
  const markdown = [
    '# Resilience suite: latest run',
    '',
    `${new Date().toISOString()}, ${process.platform}/${process.arch}, Node ${process.versions.node}`,
    '',
    markdownTable(rows),
    '',
  ].join('\n');
  writeFileSync(reportFiles.markdown, markdown);
}
