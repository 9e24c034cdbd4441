import type { Stage } from './stages.ts';
import type { StageResult } from './run-stage.ts';

/**
 * Runs `stages` up to `concurrency` at a time, in list order, each once every stage it names
 * in `after` has passed (a stage whose prerequisite failed is reported as not run). `onEnd`
 * hears of each stage as it ends. Resolves with every result, in the order they ended.
 */
export async function runStages(
  stages: readonly Stage[],
  options: {
    concurrency: number;
    run: (stage: Stage) => Promise<StageResult>;
    onEnd: (result: StageResult) => void;
    notRun: (stage: Stage, because: string) => StageResult;
  },
): Promise<StageResult[]> {
  const waiting = [...stages];
  const results: StageResult[] = [];
  const passed = new Set<string>();
  const ended = new Set<string>();
  const running = new Set<Promise<void>>();

  // A stage may start once all it waits for has ended; it runs only if they all passed.
  const ready = (stage: Stage) => (stage.after ?? []).every((name) => ended.has(name));
  const end = (result: StageResult) => {
    results.push(result);
    ended.add(result.name);
    if (result.passed) passed.add(result.name);
    options.onEnd(result);
  };
  for (;;) {
    while (running.size < options.concurrency) {
      const index = waiting.findIndex(ready);
      const stage = index >= 0 ? waiting.splice(index, 1)[0] : undefined;
      if (stage === undefined) break;
      const failedBefore = (stage.after ?? []).find((name) => !passed.has(name));
      if (failedBefore !== undefined) {
        end(options.notRun(stage, `${failedBefore} failed`));
        continue;
      }
      const task = options.run(stage).then((result) => {
        running.delete(task);
        end(result);
      });
      running.add(task);
    }
    if (running.size === 0) break;
    await Promise.race(running);
  }
  for (const stage of waiting) end(options.notRun(stage, 'it waits for a stage not in this run'));
  return results;
}
