import { describe, expect, it } from 'vitest';
import type { StageResult } from './run-stage.ts';
import { runStages } from './run-stages.ts';
import type { Stage } from './stages.ts';

const stage = (name: string, after?: string[]): Stage => ({
  name,
  cwd: '.',
  command: 'true',
  args: [],
  ...(after ? { after } : {}),
});

const result = (name: string, passed: boolean): StageResult => ({
  name,
  passed,
  startedAt: 0,
  seconds: 0,
  logFile: '',
  vitestReport: undefined,
});

/** Runs the stages with a fake `run` that ends each stage when the test says so. */
function harness(stages: Stage[], concurrency: number) {
  const started: string[] = [];
  const finishers = new Map<string, (passed: boolean) => void>();
  const ended: string[] = [];
  let peak = 0;
  const done = runStages(stages, {
    concurrency,
    run: (s) => {
      started.push(s.name);
      peak = Math.max(peak, started.length - ended.length);
      return new Promise((resolve) => finishers.set(s.name, (ok) => resolve(result(s.name, ok))));
    },
    onEnd: (r) => ended.push(r.name),
    notRun: (s, because) => ({ ...result(s.name, false), logFile: because }),
  });
  const finish = async (name: string, passed = true) => {
    finishers.get(name)?.(passed);
    // Lets the runner start what the end made room for.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, done, finish, peak: () => peak };
}

describe('runStages', () => {
  it('runs at most `concurrency` stages at once, starting the next as one ends', async () => {
    const run = harness([stage('a'), stage('b'), stage('c')], 2);
    expect(run.started).toEqual(['a', 'b']);
    await run.finish('b');
    expect(run.started).toEqual(['a', 'b', 'c']);
    await run.finish('a');
    await run.finish('c');
    expect((await run.done).map((r) => r.name)).toEqual(['b', 'a', 'c']);
    expect(run.peak()).toBe(2);
  });

  it('starts a stage only after those it waits for, and not at all when one failed', async () => {
    const run = harness([stage('e2e'), stage('types'), stage('after-types', ['types'])], 2);
    expect(run.started).toEqual(['e2e', 'types']);
    await run.finish('types', false);
    await run.finish('e2e');
    const results = await run.done;
    expect(run.started).toEqual(['e2e', 'types']);
    expect(results.find((r) => r.name === 'after-types')).toMatchObject({
      passed: false,
      logFile: 'types failed',
    });
  });

  it('reports a stage that waits for one not in the run, instead of dropping it', async () => {
    const run = harness([stage('lonely', ['missing'])], 2);
    const results = await run.done;
    expect(results).toEqual([
      expect.objectContaining({
        name: 'lonely',
        passed: false,
        logFile: expect.stringMatching(/not in this run/),
      }),
    ]);
  });
});
