import { pollUntil } from '@outbox-inbox/infra';
import { expect, it, vi } from 'vitest';
import { silentLogger } from '../logger.ts';
import { StateLog } from './state-log.ts';
import { WorkerLoops, type StepOutcome, type WorkerLoopSpec } from './worker-loop.ts';

const settle = () => new Promise((resolve) => setImmediate(resolve));
/** Long enough that a test would time out before it passes: only a wake-up or a stop ends it. */
const forever = 60_000;

/** A loop whose steps answer what `outcomes` says, in order, then wait; it counts them. */
function scripted(outcomes: (StepOutcome | Error)[], extra: Partial<WorkerLoopSpec> = {}) {
  const seen = { steps: 0, failures: [] as unknown[], ended: 0 };
  const spec: WorkerLoopSpec = {
    what: 'test loop',
    state: new StateLog(silentLogger, {}),
    step: async () => {
      seen.steps += 1;
      const next = outcomes.shift() ?? { next: 'wait' };
      if (next instanceof Error) throw next;
      return next;
    },
    failed: (error) => seen.failures.push(error),
    backoff: { initialMs: 1, maxMs: 1, multiplier: 1 },
    intervalMs: forever,
    ended: async () => {
      seen.ended += 1;
    },
    ...extra,
  };
  return { spec, seen };
}

it('steps again at once after "step", waits after "wait" until woken, and backs off after a failure, thrown or answered', async () => {
  const loops = new WorkerLoops();
  const refused = new Error('refused');
  const thrown = new Error('thrown');
  const { spec, seen } = scripted([
    { next: 'step' },
    { next: 'back-off', error: refused },
    thrown,
    { next: 'wait' },
  ]);
  loops.start(spec);
  await pollUntil(() => seen.steps === 4, { timeoutMs: 5000, description: 'four steps' });
  await settle();
  expect(seen.steps).toBe(4);
  expect(seen.failures).toEqual([refused, thrown]);
  loops.wake();
  await settle();
  expect(seen.steps).toBe(5);
  await loops.stop();
  expect(seen.ended).toBe(1);
});

it('a wake-up that comes while a step runs is not lost: the wait after it returns at once', async () => {
  const loops = new WorkerLoops();
  let steps = 0;
  const { spec } = scripted([], {
    step: async () => {
      steps += 1;
      if (steps === 1) loops.wake();
      return { next: 'wait' };
    },
  });
  loops.start(spec);
  await settle();
  await settle();
  expect(steps).toBe(2);
  await loops.stop();
});

it('"rest" waits the interval whatever wakes come; stop ends rests, lingers and waits at once', async () => {
  const loops = new WorkerLoops();
  const resting = scripted([{ next: 'rest' }]);
  const lingering = scripted([{ next: 'wait', lingerMs: forever }]);
  loops.start(resting.spec);
  loops.start(lingering.spec);
  await settle();
  loops.wake();
  await settle();
  expect(resting.seen.steps).toBe(1);
  expect(lingering.seen.steps).toBe(1);
  const stopped = Date.now();
  await loops.stop();
  expect(Date.now() - stopped).toBeLessThan(forever);
  expect([resting.seen.ended, lingering.seen.ended]).toEqual([1, 1]);
});

it('wakeOne steps only the loop that has waited longest', async () => {
  const loops = new WorkerLoops();
  const first = scripted([]);
  const second = scripted([]);
  loops.start(first.spec);
  await settle();
  loops.start(second.spec);
  await settle();
  loops.wakeOne();
  await settle();
  expect([first.seen.steps, second.seen.steps]).toEqual([2, 1]);
  await loops.stop();
});

it('loops that poll as one step once per interval between them, not once each', async () => {
  vi.useFakeTimers();
  try {
    const idleSteps = async (loops: WorkerLoops) => {
      const workers = Array.from({ length: 4 }, () => scripted([], { intervalMs: 100 }));
      for (const worker of workers) loops.start(worker.spec);
      // Each loop's first step runs at once; count the polls of the next second only.
      await vi.advanceTimersByTimeAsync(1);
      const sum = () => workers.reduce((total, worker) => total + worker.seen.steps, 0);
      const before = sum();
      await vi.advanceTimersByTimeAsync(1000);
      const polled = sum() - before;
      await loops.stop();
      return polled;
    };
    expect(await idleSteps(new WorkerLoops())).toBe(40);
    expect(await idleSteps(new WorkerLoops({ pollOneEveryMs: 100 }))).toBe(10);
  } finally {
    vi.useRealTimers();
  }
});
