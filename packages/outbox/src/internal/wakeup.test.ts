import { expect, it } from 'vitest';
import { Wakeup } from './wakeup.ts';

/** Starts `count` waits that end only when woken; returns which have ended so far. */
function waiters(wakeup: Wakeup, count: number) {
  const woken: number[] = [];
  const waits = Array.from({ length: count }, (_, n) =>
    wakeup.wait(60_000).then(() => woken.push(n)),
  );
  return { woken, waits };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

it('wakeOne ends only the longest wait; wake ends all of them', async () => {
  const wakeup = new Wakeup();
  const { woken, waits } = waiters(wakeup, 3);
  wakeup.wakeOne();
  await settle();
  expect(woken).toEqual([0]);
  wakeup.wakeOne();
  await settle();
  expect(woken).toEqual([0, 1]);
  wakeup.wake();
  await Promise.all(waits);
  expect(woken).toEqual([0, 1, 2]);
});

it('a wakeOne with nobody waiting makes the next wait return at once', async () => {
  const wakeup = new Wakeup();
  wakeup.wakeOne();
  const { woken, waits } = waiters(wakeup, 2);
  await settle();
  expect(woken).toEqual([0]);
  wakeup.wake();
  await Promise.all(waits);
});
