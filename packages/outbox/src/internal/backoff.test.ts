import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.ts';
import { isUuid, uuidv7 } from '../enqueue/uuid-v7.ts';

describe('backoffDelay', () => {
  const options = { initialMs: 100, maxMs: 1000, multiplier: 2 };
  it('grows exponentially, is capped, and jitters within [half, full]', () => {
    expect(backoffDelay(options, 1, () => 1)).toBe(100);
    expect(backoffDelay(options, 3, () => 1)).toBe(400);
    expect(backoffDelay(options, 30, () => 1)).toBe(1000);
    expect(backoffDelay(options, 30, () => 0)).toBe(500);
  });
});

describe('uuidv7', () => {
  it('is a version-7, RFC-variant UUID whose prefix is the time', () => {
    const id = uuidv7(0x0190f5e4a1b2);
    expect(isUuid(id)).toBe(true);
    expect(id.startsWith('0190f5e4-a1b2-7')).toBe(true);
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
  });
  it('sorts by creation time across milliseconds', () => {
    const ids = [1000, 2000, 3000].map((t) => uuidv7(t));
    expect([...ids].sort()).toEqual(ids);
  });
});
