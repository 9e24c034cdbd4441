import { describe, expect, it } from 'vitest';
import { StallWatch } from './stall-watch.ts';

function watchWithClock(stallAfterMs = 10_000) {
  let now = 1_000_000;
  const watch = new StallWatch({ stallAfterMs, now: () => now });
  return { watch, advance: (ms: number) => (now += ms) };
}

describe('StallWatch', () => {
  it('reports a worker stalled once a unit has had work for stallAfterMs without progress', () => {
    const { watch, advance } = watchWithClock();
    const partition = watch.reporter('inbox-writer', 'order.events/2');
    expect(watch.workers()).toEqual([{ worker: 'inbox-writer', stalled: false }]);
    partition.hasWork(true);
    advance(9_999);
    expect(watch.workers()[0]?.stalled).toBe(false);
    partition.failed(
      Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' }),
    );
    advance(1);
    expect(watch.workers()).toEqual([
      {
        worker: 'inbox-writer',
        stalled: true,
        reason:
          'has had work for 10 s without progress (order.events/2); last error: Error 22P05: unsupported Unicode escape sequence',
      },
    ]);
    partition.progressed();
    expect(watch.workers()[0]?.stalled).toBe(false);
    advance(10_000);
    expect(watch.workers()[0]?.stalled).toBe(true);
    partition.hasWork(false);
    expect(watch.workers()[0]?.stalled).toBe(false);
  });

  it('starts the clock when work appears, not when the worker last made progress', () => {
    const { watch, advance } = watchWithClock();
    const loop = watch.reporter('inbox-processor', 'worker 0');
    loop.progressed();
    advance(60_000);
    loop.hasWork(true);
    advance(5_000);
    loop.hasWork(true);
    expect(watch.workers()[0]?.stalled).toBe(false);
  });

  it('names the unit stalled longest, and one stalled unit stalls its worker', () => {
    const { watch, advance } = watchWithClock();
    watch.reporter('dedup-consumer', 'p/0').hasWork(true);
    advance(5_000);
    watch.reporter('dedup-consumer', 'p/1').hasWork(true);
    watch.reporter('outbox-relay').hasWork(false);
    advance(20_000);
    watch.reporter('dedup-consumer', 'p/1').progressed();
    expect(watch.workers()).toEqual([
      {
        worker: 'dedup-consumer',
        stalled: true,
        reason: 'has had work for 25 s without progress (p/0)',
      },
      { worker: 'outbox-relay', stalled: false },
    ]);
  });

  it('probes for work at most once per interval and ignores a failed probe', async () => {
    const { watch, advance } = watchWithClock(8_000);
    const relay = watch.reporter('outbox-relay');
    let probes = 0;
    const probe = async () => {
      probes += 1;
      return true;
    };
    relay.checkWork(probe);
    relay.checkWork(probe);
    await Promise.resolve();
    expect(probes).toBe(1);
    advance(2_000);
    relay.checkWork(async () => {
      throw new Error('database down');
    });
    advance(8_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(watch.workers()[0]?.stalled).toBe(true);
  });

  it('a unit with its own limit stalls when what it reports has waited that long', () => {
    const { watch, advance } = watchWithClock(60_000);
    const fence = watch.reporter('outbox-relay', 'rows held by the commit-order fence', 30_000);
    fence.hasWork(true, 29_000);
    expect(watch.workers()[0]?.stalled).toBe(false);
    advance(1_000);
    expect(watch.workers()[0]).toEqual({
      worker: 'outbox-relay',
      stalled: true,
      reason: 'has had work for 30 s without progress (rows held by the commit-order fence)',
    });
    // A younger oldest row (the old one was released): the clock follows it.
    fence.hasWork(true, 5_000);
    expect(watch.workers()[0]?.stalled).toBe(false);
    fence.hasWork(false);
    advance(60_000);
    expect(watch.workers()[0]?.stalled).toBe(false);
  });
});
