import { migrateService } from '@outbox-inbox/launcher';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import { sql, type Kysely } from 'kysely';
import { writeBacklog } from '../../backlog.ts';
import { defineScenario, type BenchContext, type Scenario } from '../../context.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import { startRole } from '../../services.ts';
import { int } from '../../stats.ts';
import { memorySection } from './memory-section.ts';
import { sampleUntilDrained, type MemoryRun } from './sample-memory.ts';

/** Rows per backlog transaction. */
const CHUNK = 100_000;

interface MemoryBench {
  readonly ordersUrl: string;
  readonly paymentsUrl: string;
  readonly orders: Kysely<OutboxTables>;
  readonly payments: Kysely<OutboxTables>;
  /** How long writing the backlog took, before any process started. */
  readonly backlogSeconds: number;
}

async function setUpMemory(ctx: BenchContext): Promise<MemoryBench> {
  const ordersUrl = await ctx.stack.createDatabase('bench_memory_orders');
  const paymentsUrl = await ctx.stack.createDatabase('bench_memory_payments');
  await migrateService(orderService, ordersUrl);
  await migrateService(paymentService, paymentsUrl);
  await freshTopics(ctx.kafka, [
    { topic: 'order.events', partitions: 3 },
    { topic: 'payment.events', partitions: 3 },
  ]);
  const orders = benchDb<OutboxTables>(ordersUrl);
  const payments = benchDb<OutboxTables>(paymentsUrl);
  const backlogSeconds = await writeMemoryBacklog(ctx, orders);
  return { ordersUrl, paymentsUrl, orders, payments, backlogSeconds };
}

/** The whole backlog, written before any process starts; returns the seconds it took. */
async function writeMemoryBacklog(ctx: BenchContext, orders: Kysely<OutboxTables>) {
  const events = ctx.settings.memoryEvents;
  const started = performance.now();
  for (let written = 0; written < events; written += CHUNK) {
    const chunk = Math.min(CHUNK, events - written);
    await writeBacklog(orders, { events: chunk, keys: ctx.settings.keys, topic: 'order.events' });
    ctx.log(`B6 backlog ${int(written + chunk)} / ${int(events)}`);
  }
  await sql`VACUUM ANALYZE outbox_event`.execute(orders);
  return (performance.now() - started) / 1000;
}

/** The relay and the inbox writer, each the real role process, drain the backlog together. */
async function drainTogether(ctx: BenchContext, bench: MemoryBench): Promise<MemoryRun> {
  const started = performance.now();
  const [relay, consumer] = await Promise.all([
    startRole(ctx.stack, {
      component: 'b6-order-relay',
      service: orderService,
      role: 'relay',
      databaseUrl: bench.ordersUrl,
      settings: { RELAY_BATCH_SIZE: String(ctx.settings.batchSize) },
    }),
    startRole(ctx.stack, {
      component: 'b6-payment-consumer',
      service: paymentService,
      role: 'consumer',
      databaseUrl: bench.paymentsUrl,
    }),
  ]);
  const run = await sampleUntilDrained(
    ctx,
    { relay, consumer, started },
    { orders: bench.orders, payments: bench.payments, events: ctx.settings.memoryEvents },
  );
  await Promise.all([relay.stop(), consumer.stop()]);
  return run;
}

/**
 * B6: order-service's relay process drains a large backlog into order.events while
 * payment-service's consumer process (the inbox writer) ingests it; the resident memory of
 * both is sampled every second from /proc until both are done.
 */
export const memory: Scenario = defineScenario({
  id: 'B6',
  setUp: setUpMemory,
  measure: drainTogether,
  report: (ctx, bench, run) =>
    memorySection(ctx.settings, run, {
      seconds: bench.backlogSeconds,
      rowsPerTransaction: CHUNK,
    }),
  tearDown: async (bench) => {
    await Promise.all([bench.orders.destroy(), bench.payments.destroy()]);
  },
});
