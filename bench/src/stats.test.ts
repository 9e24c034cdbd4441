import { describe, expect, it } from 'vitest';
import { fixed, int, percentile, showSpread, spread } from './stats.ts';

describe('percentile (nearest rank)', () => {
  it('picks a value that was measured, ignoring what is not a number', () => {
    const values = [5, 1, 4, 2, 3, Number.NaN];
    expect(percentile(values, 50)).toBe(3);
    expect(percentile(values, 100)).toBe(5);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile([10, 20, 30, 40], 95)).toBe(40);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('the tables', () => {
  it('show a spread as median (min–max), a single run as itself', () => {
    expect(showSpread(spread([12_000, 9_500, 11_250]))).toBe('11,250 (9,500–12,000)');
    expect(showSpread(spread([0.61]), (v) => fixed(v))).toBe('0.61');
    expect(int(Number.NaN)).toBe('n/a');
    expect(fixed(Number.POSITIVE_INFINITY)).toBe('n/a');
  });
});
