import { expect } from 'vitest';
import type { InvariantReport } from './check-invariants.ts';

/**
 * Fails the test when an invariant is broken, with the first violations as the message: a
 * diff of hundreds of strings is truncated by the reporter, the first few say what broke.
 */
export function expectInvariantsHeld(report: InvariantReport): void {
  const { violations } = report;
  const shown = violations.slice(0, 10).join('\n');
  const more = violations.length > 10 ? `\n… and ${violations.length - 10} more` : '';
  expect(violations, `${violations.length} invariant(s) broken:\n${shown}${more}`).toEqual([]);
}
