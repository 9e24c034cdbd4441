import { readFileSync } from 'node:fs';
import { clearReport, reportFiles, writeReport } from './report.ts';

/**
 * Vitest `globalSetup`: each run starts a fresh report (no rows left from an earlier run), unless
 * E2E_REPORT_APPEND=1 says that the caller cleared it for several runs at once (`./pnpm test`),
 * and prints the table when the run ends.
 */
export default function setup(): () => void {
  if (process.env['E2E_REPORT_APPEND'] !== '1') clearReport();
  return () => {
    // Again at the end: a run that wrote at the same moment as another may have missed its row.
    writeReport();
    try {
      console.log(`\n${readFileSync(reportFiles.markdown, 'utf8')}`);
    } catch {
      // Not a failure: a run of tests that are not resilience scenarios (7-anti-patterns).
      console.log('\n(no resilience scenario ran, so there is no report table to print)');
    }
  };
}
