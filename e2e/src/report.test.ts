import { describe, expect, it } from 'vitest';
import { abortedRow, markdownTable } from './report.ts';

describe('the e2e report', () => {
  it('gives a scenario that stopped early a FAILED row with its faults and the first line of why', () => {
    const row = abortedRow(
      '5 kafka wiped',
      ['kafka wiped (storage deleted, restarted empty)'],
      new Error(
        'timed out after 45000 ms waiting for the system to settle\n    at waitUntilSettled',
      ),
    );
    const [, , line] = markdownTable([row]).split('\n');
    expect(line).toBe(
      '| 5 kafka wiped | - | - | - | - | - | - | - | - | - | kafka wiped (storage deleted, restarted empty), stopped: timed out after 45000 ms waiting for the system to settle | FAILED |',
    );
  });
});
