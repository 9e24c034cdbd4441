import { describe, expect, it } from 'vitest';
import { ratioPerRound, runRounds, runsOf } from './rounds.ts';

describe('runRounds', () => {
  it('runs every variant once per round, rotating who goes first', async () => {
    const order: string[] = [];
    const runs = await runRounds(['A', 'B', 'C'], 4, async (variant, round) => {
      order.push(variant);
      return `${variant}${round}`;
    });
    expect(order.join('')).toBe('ABC' + 'BCA' + 'CAB' + 'ABC');
    expect(runsOf(runs, 'B')).toEqual(['B0', 'B1', 'B2', 'B3']);
    expect(runsOf(runs, 'D')).toEqual([]);
  });
});

describe('ratioPerRound', () => {
  it('divides within each round before taking the median, so a slow round cancels out', () => {
    // Round 2 ran on a machine twice as slow for both variants: the ratio does not move.
    const ratio = ratioPerRound([100, 200, 50], [200, 400, 100]);
    expect(ratio.runs).toEqual([0.5, 0.5, 0.5]);
    expect(ratio).toMatchObject({ median: 0.5, min: 0.5, max: 0.5 });
  });

  it('leaves a round out of the median when the other variant has no run for it', () => {
    const ratio = ratioPerRound([1, 2, 3], [1, 1]);
    expect(ratio.runs.slice(0, 2)).toEqual([1, 2]);
    expect(ratio.runs[2]).toBeNaN();
    expect(ratio.median).toBe(1);
  });
});
