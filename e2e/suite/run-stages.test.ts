import { describe, expect, it } from 'vitest';
import type { StageResult } from './run-stage.ts';
import { runStages } from './run-stages.ts';
import type { Stage } from './stages.ts';

const stage = (name: string): Stage => ({ name, cwd: '.', command: 'true', args: [] });

/** Runs the stages with a fake `run` that ends each stage when the test says so. */
function harness(stages: Stage[], concurrency: number) {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  let running = 0;
  let peak = 0;
  const done = runStages(stages, {
    concurrency,
    run: (s) => {
      started.push(s.name);
      peak = Math.max(peak, ++running);
      return new Promise<StageResult>((resolve) =>
        finishers.set(s.name, () => {
          running -= 1;
          resolve({
            name: s.name,
            passed: true,
            startedAt: 0,
            seconds: 0,
            logFile: '',
            vitestReport: undefined,
            scenarios: false,
          });
        }),
      );
    },
    onEnd: () => undefined,
  });
  const finish = async (name: string) => {
    finishers.get(name)?.();
    // Lets the runner start what the end made room for.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { started, done, finish, peak: () => peak };
}

describe('runStages', () => {
  it('runs at most `concurrency` stages at once, in list order, the next as one ends', async () => {
    const run = harness([stage('a'), stage('b'), stage('c'), stage('d')], 2);
    expect(run.started).toEqual(['a', 'b']);
    await run.finish('b');
    expect(run.started).toEqual(['a', 'b', 'c']);
    await run.finish('c');
    expect(run.started).toEqual(['a', 'b', 'c', 'd']);
    await run.finish('a');
    await run.finish('d');
    expect((await run.done).map((r) => r.name)).toEqual(['b', 'c', 'a', 'd']);
    expect(run.peak()).toBe(2);
  });

  it('runs every stage once when there are fewer stages than lanes', async () => {
    const run = harness([stage('only')], 3);
    await run.finish('only');
    expect((await run.done).map((r) => r.name)).toEqual(['only']);
    expect(run.started).toEqual(['only']);
  });
});
