import { expect, it } from 'vitest';
import { DEFAULT_RELAY_OPTIONS, resolveRelayOptions } from './relay-options.ts';

it('applies defaults once, freezes, and refuses a send timeout that outlives the row locks', () => {
  const options = resolveRelayOptions({
    batchSize: 50,
    backoff: { initialMs: 5, maxMs: 50, multiplier: 3 },
  });
  expect(options.batchSize).toBe(50);
  expect(options.pollIntervalMs).toBe(DEFAULT_RELAY_OPTIONS.pollIntervalMs);
  expect(Object.isFrozen(options)).toBe(true);
  expect(() => resolveRelayOptions({ sendTimeoutMs: 20_000 })).toThrow(/sendTimeoutMs/);
  expect(() => resolveRelayOptions({ batchSize: 0 })).toThrow(/batchSize/);
  expect(() => resolveRelayOptions({ maxBatchBytes: 0 })).toThrow(/maxBatchBytes/);
  expect(() => resolveRelayOptions({ maxPublishAttempts: 1.5 })).toThrow(/maxPublishAttempts/);
  expect(() => resolveRelayOptions({ maxBatchBytes: 10_000, maxEventBytes: 20_000 })).toThrow(
    /maxEventBytes/,
  );
  expect(resolveRelayOptions({ maxBatchBytes: 10_000 }).maxEventBytes).toBe(10_000);
});
