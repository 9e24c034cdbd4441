import { expect, it } from 'vitest';
import { lsnBytes, WalTimeline } from './wal-position.ts';

it('reads a WAL position as bytes', () => {
  expect(lsnBytes('0/0')).toBe(0n);
  expect(lsnBytes('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
  expect(() => lsnBytes('garbage')).toThrow(/not a WAL position/);
});

it('a slot is as far behind as the time since the WAL stood where it confirmed', () => {
  const timeline = new WalTimeline();
  timeline.sample(1000, 100n);
  timeline.sample(2000, 200n);
  timeline.sample(3000, 300n);
  // Confirmed up to 200: the WAL stood there at 2000 ms.
  expect(timeline.secondsBehind(200n, 5000)).toBe(3);
  // Between two samples: the last one at or before it counts.
  expect(timeline.secondsBehind(250n, 5000)).toBe(3);
  // Caught up with the latest sample: no lag.
  expect(timeline.secondsBehind(300n, 5000)).toBe(0);
});

it('a slot behind every sample is at least as old as the oldest one', () => {
  const timeline = new WalTimeline();
  timeline.sample(10_000, 500n);
  timeline.sample(11_000, 600n);
  expect(timeline.secondsBehind(100n, 15_000)).toBe(5);
});

it('keeps at most maxSamples while a slot stays behind, and still knows when it stopped', () => {
  const timeline = new WalTimeline({ maxSamples: 32 });
  // One sample a second for almost three hours, the slot stuck at the first one.
  for (let second = 0; second < 10_000; second++) {
    timeline.sample(second * 1000, BigInt(second));
    expect(timeline.secondsBehind(0n, second * 1000)).toBe(second);
    expect(timeline.size).toBeLessThanOrEqual(32);
  }
});

it('a thinned timeline never understates the lag, and overstates it by a fraction only', () => {
  const timeline = new WalTimeline({ maxSamples: 32 });
  const now = 9_999_000;
  for (let second = 0; second < 10_000; second++) timeline.sample(second * 1000, BigInt(second));
  // Increasing, as a slot confirms: each answer drops the samples the slot passed.
  for (const confirmed of [1, 10, 100, 1000, 3000, 6000, 9000, 9990, 9998]) {
    const exact = (now - confirmed * 1000) / 1000;
    const answer = timeline.secondsBehind(BigInt(confirmed), now);
    expect(answer, `confirmed ${confirmed}`).toBeGreaterThanOrEqual(exact);
    expect(answer, `confirmed ${confirmed}`).toBeLessThanOrEqual(exact * 1.6);
  }
});

it('drops first a sample the WAL did not move past, which is never the answer', () => {
  const timeline = new WalTimeline({ maxSamples: 4 });
  timeline.sample(0, 100n);
  timeline.sample(1000, 150n);
  // An idle server: the WAL stands still for a second, then moves.
  timeline.sample(8000, 200n);
  timeline.sample(9000, 200n);
  timeline.sample(10_000, 300n);
  expect(timeline.size).toBe(4);
  // Both answers stay exact: only the level sample at 8000 ms went.
  expect(timeline.secondsBehind(150n, 10_000)).toBe(9);
  expect(timeline.secondsBehind(250n, 10_000)).toBe(1);
});

it('refuses a cap that leaves nothing to merge', () => {
  expect(() => new WalTimeline({ maxSamples: 2 })).toThrow(/maxSamples/);
});
