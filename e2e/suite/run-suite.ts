#!/usr/bin/env node
/**
 * `./pnpm test`: every stage of stages.ts, two at a time, each one's output printed whole when
 * it ends; then the timing table (also written to e2e/report/suite/timing.md, which git
 * ignores, so a run's figures stay next to its logs).
 *   node e2e/suite/run-suite.ts [--only <stage>[,<stage>…]] [--concurrency <n>]
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { findRepoRoot } from '@outbox-inbox/infra';
import { clearReport } from '../src/report.ts';
import { runStage } from './run-stage.ts';
import { runStages } from './run-stages.ts';
import { stages } from './stages.ts';
import { testCounts, timingReport } from './timing-table.ts';

const { values } = parseArgs({
  options: { only: { type: 'string' }, concurrency: { type: 'string' } },
});
const concurrency = Number(values.concurrency ?? process.env['TEST_CONCURRENCY'] ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`--concurrency must be a whole number of at least 1, not ${values.concurrency}`);
  process.exit(2);
}
const only = values.only?.split(',').map((name) => name.trim());
const unknown = (only ?? []).filter((name) => !stages.some((stage) => stage.name === name));
if (unknown.length > 0) {
  console.error(`no stage ${unknown.join(', ')}; known: ${stages.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const selected = only ? stages.filter((stage) => only.includes(stage.name)) : stages;

const root = findRepoRoot();
// The scenario stages add their rows to one e2e report (E2E_REPORT_APPEND): it starts empty here.
if (selected.some((stage) => stage.scenarios)) clearReport();
const logDir = path.join(root, 'e2e', 'report', 'suite');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });
const suiteStart = Date.now();
const clock = () => new Date().toISOString().slice(11, 19);
console.log(
  `${clock()} ${selected.length} stages, ${concurrency} at a time: ${selected.map((s) => s.name).join(', ')}`,
);

const results = await runStages(selected, {
  concurrency,
  run: (stage) => {
    console.log(`${clock()} ▶ ${stage.name}`);
    return runStage(stage, { root, logDir, suiteStart });
  },
  onEnd: (result) => {
    const mark = result.passed ? '✓' : '✗';
    console.log(
      `\n${clock()} ${mark} ${result.name}: ${Math.round(result.seconds)} s ─── its output:`,
    );
    console.log(readFileSync(result.logFile, 'utf8').trimEnd());
    console.log(`${clock()} ${mark} ${result.name} ─── end of its output\n`);
  },
});

const wallSeconds = (Date.now() - suiteStart) / 1000;
const report = timingReport(results, { root, wallSeconds, concurrency });
writeFileSync(path.join(logDir, 'timing.md'), report);
console.log(`\n${report}`);
const failed = results.filter((result) => !result.passed);
if (failed.length > 0) console.log(`failed: ${failed.map((result) => result.name).join(', ')}`);
const counts = testCounts(results);
console.log(`tests: ${counts.passed} passed, ${counts.failed} failed`);
process.exitCode = failed.length > 0 ? 1 : 0;
