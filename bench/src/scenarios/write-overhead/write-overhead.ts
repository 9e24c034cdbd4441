import { migrateService } from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { runRounds } from '../../rounds.ts';
import { startRole, type RoleHandle } from '../../services.ts';
import { int } from '../../stats.ts';
import { withoutOutboxCommand } from '../../variants/order-service-without-outbox.ts';
import { cannon, writeVariants, type WriteRun, type WriteVariant } from './cannon.ts';
import { writeBreakdown } from './write-breakdown.ts';
import { writeOverheadSection } from './write-overhead-section.ts';

/** One api process per variant, each on its own database: the shipped one and B4's variant. */
async function startApis(ctx: BenchContext): Promise<Map<WriteVariant, RoleHandle>> {
  const apis = new Map<WriteVariant, RoleHandle>();
  for (const variant of writeVariants) {
    const shipped = variant === 'with outbox';
    const url = await ctx.stack.createDatabase(
      shipped ? 'bench_write_outbox' : 'bench_write_plain',
    );
    await migrateService(orderService, url);
    const api = await startRole(ctx.stack, {
      component: shipped ? 'b4-api-with-outbox' : 'b4-api-without-outbox',
      service: orderService,
      role: 'api',
      databaseUrl: url,
      command: shipped ? undefined : withoutOutboxCommand(),
    });
    apis.set(variant, api);
  }
  return apis;
}

async function measureWrites(
  ctx: BenchContext,
  apis: ReadonlyMap<WriteVariant, RoleHandle>,
): Promise<Map<WriteVariant, WriteRun[]>> {
  const { settings } = ctx;
  const apiOf = (variant: WriteVariant) => apis.get(variant);
  ctx.log('B4 warm-up');
  for (const variant of writeVariants) {
    await cannon(ctx, apiOf(variant), Math.min(2, settings.writeSeconds));
  }
  return runRounds(writeVariants, settings.rounds, async (variant, round) => {
    const run = await cannon(ctx, apiOf(variant), settings.writeSeconds);
    ctx.log(`B4 round ${round + 1} ${variant}: ${int(run.rps)} orders/s, p99 ${run.p99} ms`);
    return run;
  });
}

/**
 * B4, the price of atomicity: `POST /orders` on order-service's api process, as shipped (order
 * row + outbox row + NOTIFY in one transaction), against the same process with the bench's
 * variant route that writes the order row only. Same code path otherwise: Fastify,
 * validation, pool, serialisation. Rounds side by side with autocannon in the bench process;
 * no relay runs (its cost is B1's subject). Then the same split without HTTP.
 */
export const writeOverhead: Scenario = defineScenario({
  id: 'B4',
  setUp: startApis,
  async measure(ctx, apis) {
    const runs = await measureWrites(ctx, apis);
    ctx.log('B4 breakdown without HTTP');
    return { runs, breakdown: await writeBreakdown(ctx) };
  },
  report: (ctx, _apis, { runs, breakdown }) => writeOverheadSection(ctx.settings, runs, breakdown),
  tearDown: async (apis) => {
    await Promise.all([...apis.values()].map((api) => api.stop()));
  },
});
