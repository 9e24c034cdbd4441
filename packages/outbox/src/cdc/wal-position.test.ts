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
