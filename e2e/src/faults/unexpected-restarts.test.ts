import { describe, expect, it } from 'vitest';
import { restartsNotExplained } from './unexpected-restarts.ts';

describe('unexpected restarts', () => {
  const death = { component: 'order-relay', point: 'relay-after-publish', at: 0 } as const;

  it('are the restarts that no kill, stop or injected death of the scenario explains', () => {
    expect(
      restartsNotExplained({ 'order-relay': 3, 'order-consumer': 1 }, { 'order-relay': 1 }, [
        death,
      ]),
    ).toEqual([
      'order-relay restarted 3x, expected at most 2x',
      'order-consumer restarted 1x, expected at most 0x',
    ]);
  });

  it('leave out a component restarted no more than it was taken down', () => {
    expect(restartsNotExplained({ 'order-relay': 2 }, { 'order-relay': 1 }, [death])).toEqual([]);
    expect(restartsNotExplained({}, { kafka: 1 }, [])).toEqual([]);
  });
});
