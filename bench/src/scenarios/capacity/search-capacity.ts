import type { BenchContext } from '../../context.ts';
import { fixed, int } from '../../stats.ts';
import type { CapacitySystem, CapacityVariant } from './capacity-system.ts';
import { measureStep, type CapacityStep } from './measure-step.ts';

/** Every rate tried for one variant, and the highest one it carried. */
export interface CapacitySearch {
  readonly variant: CapacityVariant;
  readonly steps: readonly CapacityStep[];
  /** The highest rate that met every condition; undefined when none did. */
  readonly carried: CapacityStep | undefined;
  /** Half the carried rate, held once more after the search: the latency a fork runs at. */
  readonly halfway: CapacityStep | undefined;
}

/** The next rate to try: up by the growth factor until a miss, then halfway into the gap. */
function nextRate(
  growth: number,
  carried: CapacityStep | undefined,
  missed: CapacityStep | undefined,
  last: number,
): number | undefined {
  if (missed === undefined) return Math.round(last * growth);
  const low = carried?.rate ?? 0;
  // Within a tenth of the carried rate: close enough to say what the capacity is.
  if (missed.rate - low <= Math.max(10, low / 10)) return undefined;
  return Math.round((low + missed.rate) / 2);
}

/**
 * Offers rising constant rates (each for `capacitySeconds`) until one is missed, then narrows
 * the gap. A step whose orders did not drain ends the search: the next would start behind.
 */
export async function searchCapacity(
  ctx: BenchContext,
  system: CapacitySystem,
  variant: CapacityVariant,
): Promise<CapacitySearch> {
  const { settings } = ctx;
  // Warm-up (JIT, pools, consumer fetch loops, first-touch of the tables): not counted.
  await measureStep(system, {
    rate: settings.capacityStartRate / 2,
    seconds: Math.min(10, settings.capacitySeconds),
    drainTimeoutMs: 120_000,
  });
  const steps: CapacityStep[] = [];
  let carried: CapacityStep | undefined;
  let missed: CapacityStep | undefined;
  let rate: number | undefined = settings.capacityStartRate;
  while (rate !== undefined && rate > 0 && steps.length < settings.capacitySteps) {
    const step = await measureStep(system, {
      rate,
      seconds: settings.capacitySeconds,
      drainTimeoutMs: 120_000,
    });
    steps.push(step);
    ctx.log(
      `B7 ${variant.name} at ${rate}/s: ${step.failed.length === 0 ? 'carried' : `missed (${step.failed.join(', ')})`}; handled p99 ${fixed(step.handledP99Ms, 0)} ms, PAID p99 ${fixed(step.paidP99Ms, 0)} ms, backlog growth ${int(step.backlogGrowth)}`,
    );
    if (step.failed.length === 0) {
      if (carried === undefined || step.rate > carried.rate) carried = step;
    } else if (missed === undefined || step.rate < missed.rate) {
      missed = step;
    }
    if (!step.drained) break;
    rate = nextRate(settings.capacityGrowth, carried, missed, rate);
  }
  const halfway =
    carried === undefined
      ? undefined
      : await measureStep(system, {
          rate: Math.round(carried.rate / 2),
          seconds: settings.capacitySeconds,
          drainTimeoutMs: 120_000,
        });
  if (halfway) {
    ctx.log(
      `B7 ${variant.name} at half of capacity, ${halfway.rate}/s: PAID p99 ${fixed(halfway.paidP99Ms, 0)} ms`,
    );
  }
  return { variant, steps, carried, halfway };
}
