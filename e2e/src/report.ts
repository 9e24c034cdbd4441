import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
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
const jsonFile = path.join(reportDir, 'latest.json');

/** Where the counts go: JSON for machines, Markdown for people. */
export const reportFiles = Object.freeze({
  json: jsonFile,
  markdown: path.join(reportDir, 'latest.md'),
});

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
 * Records one scenario's counts in e2e/report/latest.json and rewrites latest.md.
 * The suite's global set-up starts each run with no report.
 */
export function recordScenario(counts: ReportRow): void {
  mkdirSync(reportDir, { recursive: true });
  const previous: ReportRow[] = existsSync(jsonFile)
    ? (JSON.parse(readFileSync(jsonFile, 'utf8')) as ReportRow[])
    : [];
  const rows = [...previous.filter((row) => row.scenario !== counts.scenario), counts].sort(
    (a, b) => a.scenario.localeCompare(b.scenario),
  );
  writeFileSync(jsonFile, `${JSON.stringify(rows, null, 2)}\n`);
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
