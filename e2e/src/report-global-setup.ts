import { readFileSync, rmSync } from 'node:fs';
import { reportFiles } from './report.ts';

/**
 * Vitest `globalSetup`: each run starts a fresh report (no rows left from an earlier run)
 * and prints the table when the suite ends.
 */
export default function setup(): () => void {
  rmSync(reportFiles.json, { force: true });
  rmSync(reportFiles.markdown, { force: true });
  return () => {
    try {
      console.log(`\n${readFileSync(reportFiles.markdown, 'utf8')}`);
    } catch {
      // Not a failure: a run of tests that are not resilience scenarios (7-anti-patterns).
      console.log('\n(no resilience scenario ran, so there is no report table to print)');
    }
  };
}
