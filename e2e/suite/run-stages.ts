import type { Stage } from './stages.ts';
import type { StageResult } from './run-stage.ts';

/**
 * Runs `stages` up to `concurrency` at a time, in list order, the next one starting as soon as
 * one ends. `onEnd` hears of each stage as it ends. Resolves with every result, in the order
 * they ended.
 */
export async function runStages(
  stages: readonly Stage[],
  options: {
    concurrency: number;
    run: (stage: Stage) => Promise<StageResult>;
    onEnd: (result: StageResult) => void;
  },
): Promise<StageResult[]> {
  const waiting = [...stages];
  const results: StageResult[] = [];
  const lane = async (): Promise<void> => {
    for (let stage = waiting.shift(); stage !== undefined; stage = waiting.shift()) {
      const result = await options.run(stage);
      results.push(result);
      options.onEnd(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, stages.length) }, lane));
  return results;
}
