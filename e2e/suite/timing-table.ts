import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { StageResult } from './run-stage.ts';

/** The part of vitest's JSON report the table reads. */
interface VitestReport {
  readonly testResults: readonly {
    readonly name: string;
    readonly startTime: number;
    readonly endTime: number;
    readonly assertionResults: readonly {
      readonly fullName: string;
      readonly duration?: number | null;
      readonly status: string;
    }[];
  }[];
}

export interface TimedItem {
  readonly name: string;
  readonly seconds: number;
  readonly passed: boolean;
}

const seconds = (value: number) => `${value.toFixed(0)} s`;
/** `9:60` never: seconds are rounded before they are split into minutes. */
export function minutes(value: number): string {
  const total = Math.round(value);
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
}

function readReport(file: string | undefined): VitestReport | undefined {
  if (file === undefined || !existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
}

/** Each test file of a stage's vitest report with its wall time, slowest first. */
export function testFiles(result: StageResult, root: string): TimedItem[] {
  const report = readReport(result.vitestReport);
  return (report?.testResults ?? [])
    .map((file) => ({
      name: `${result.name}: ${path.relative(root, file.name)}`,
      seconds: (file.endTime - file.startTime) / 1000,
      passed: file.assertionResults.every((test) => test.status !== 'failed'),
    }))
    .sort((a, b) => b.seconds - a.seconds);
}

/**
 * Each test of a stage (a scenario, for a stage of scenarios) that took a second or more, named by
 * its file and title, with its duration, slowest first.
 */
export function tests(result: StageResult): TimedItem[] {
  const report = readReport(result.vitestReport);
  return (report?.testResults ?? [])
    .flatMap((file) =>
      file.assertionResults.map((test) => ({
        name: `${path.basename(file.name, '.test.ts')} › ${test.fullName}`,
        seconds: (test.duration ?? 0) / 1000,
        passed: test.status !== 'failed',
      })),
    )
    .filter((test) => test.seconds >= 1 || !test.passed)
    .sort((a, b) => b.seconds - a.seconds);
}

/**
 * Tests passed and failed over the whole suite: each vitest test, and each other stage (format,
 * types, mutations) as one. A stage that failed with no failed test of its own (a crash, a
 * global setup that threw) counts as one failure, so a failure is never hidden by the count.
 */
export function testCounts(results: readonly StageResult[]): { passed: number; failed: number } {
  let passed = 0;
  let failed = 0;
  for (const result of results) {
    const report = readReport(result.vitestReport);
    const all = report?.testResults.flatMap((file) => file.assertionResults) ?? [];
    const failedTests = all.filter((test) => test.status === 'failed').length;
    passed += report
      ? all.filter((test) => test.status === 'passed').length
      : result.passed
        ? 1
        : 0;
    failed += failedTests > 0 ? failedTests : result.passed ? 0 : 1;
  }
  return { passed, failed };
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

/**
 * The suite's timing report, in Markdown: each stage (when it started, how long it took), each
 * resilience scenario, and the slowest test files of the other stages.
 */
export function timingReport(
  results: readonly StageResult[],
  options: { root: string; wallSeconds: number; concurrency: number; slowest?: number },
): string {
  const verdict = (passed: boolean) => (passed ? 'passed' : 'FAILED');
  const byStart = [...results].sort((a, b) => a.startedAt - b.startedAt);
  const scenarios = results.filter((result) => result.scenarios).flatMap(tests);
  const files = results
    .filter((result) => !result.scenarios)
    .flatMap((result) => testFiles(result, options.root))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, options.slowest ?? 15);
  return [
    `# Test suite timing`,
    '',
    `${new Date().toISOString()}: ${minutes(options.wallSeconds)} wall, ${options.concurrency} stages at a time.`,
    '',
    table(
      ['stage', 'started at', 'wall', 'result'],
      byStart.map((r) => [r.name, minutes(r.startedAt), minutes(r.seconds), verdict(r.passed)]),
    ),
    '',
    '## Resilience scenarios (e2e; tests under a second left out)',
    '',
    table(
      ['scenario', 'wall', 'result'],
      scenarios.map((s) => [s.name, seconds(s.seconds), verdict(s.passed)]),
    ),
    '',
    '## Slowest test files of the other stages',
    '',
    table(
      ['file', 'wall', 'result'],
      files.map((f) => [f.name, seconds(f.seconds), verdict(f.passed)]),
    ),
    '',
  ].join('\n');
}
