import { expect, it } from 'vitest';
import { minutes } from './timing-table.ts';

it('writes seconds as minutes:seconds, rounding before it splits', () => {
  expect(minutes(0)).toBe('0:00');
  expect(minutes(599.6)).toBe('10:00');
  expect(minutes(61.4)).toBe('1:01');
  expect(minutes(1454)).toBe('24:14');
});
