import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { capacitySection } from './capacity-section.ts';
import { startCapacitySystem, type CapacityVariant } from './capacity-system.ts';
import { searchCapacity, type CapacitySearch } from './search-capacity.ts';

const variants: readonly CapacityVariant[] = [
  { name: 'library, handler of 0 ms', design: 'library', providerMs: 0 },
  { name: 'library, 20 ms provider call', design: 'library', providerMs: 20 },
  { name: 'guide as written, 0 ms', design: 'guide', providerMs: 0 },
  {
    name: 'library, 0 ms, one process per service',
    design: 'library',
    providerMs: 0,
    processes: 'service',
  },
  {
    name: 'library, 0 ms, on @platformatic/kafka',
    design: 'library',
    providerMs: 0,
    kafkaClient: 'platformatic',
  },
];

/**
 * The variants to run: all, or those whose positions (1-based, in the order above) the
 * comma-separated BENCH_CAPACITY_VARIANTS names, for a before-and-after pair of one lever.
 */
function selectedVariants(env: NodeJS.ProcessEnv): [number, CapacityVariant][] {
  const positions = env['BENCH_CAPACITY_VARIANTS']?.split(',').map((one) => Number(one.trim()));
  const all = [...variants.entries()];
  if (positions === undefined) return all;
  const unknown = positions.filter((n) => !Number.isInteger(n) || n < 1 || n > variants.length);
  if (unknown.length > 0) {
    throw new Error(
      `BENCH_CAPACITY_VARIANTS: no variant at ${unknown.join(', ')}; 1 to ${variants.length}`,
    );
  }
  return all.filter(([index]) => positions.includes(index + 1));
}

/** Each variant on its own fresh system, one after the other. */
async function measureAll(ctx: BenchContext): Promise<CapacitySearch[]> {
  const searches: CapacitySearch[] = [];
  for (const [index, variant] of selectedVariants(process.env)) {
    const system = await startCapacitySystem(ctx, variant, index);
    try {
      searches.push(await searchCapacity(ctx, system, variant));
    } finally {
      await system.stop();
    }
  }
  return searches;
}

/**
 * B7: how many orders per second the whole system carries end to end on this machine, with a
 * handler that takes no time (the architecture's own cost), with `pnpm dev`'s 20 ms provider
 * call (what a user of the template gets), and with the style guide's relay and processor as
 * written, side by side in one run.
 */
export const capacity: Scenario = defineScenario({
  id: 'B7',
  setUp: async () => undefined,
  measure: (ctx) => measureAll(ctx),
  report: (ctx, _bench, searches) => capacitySection(searches, ctx.settings.capacitySeconds),
  tearDown: async () => undefined,
});
