import { topicDeclarations } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import { migrateService, roleProcesses } from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { paymentService } from '@outbox-inbox/payment-service';
import { sql, type Kysely } from 'kysely';
import { defineScenario, type BenchContext } from '../../context.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import { offerOrders } from '../../load.ts';
import { startRole, type RoleHandle } from '../../services.ts';
import { readKafkaRequests, requestsSince } from './kafka-requests.ts';
import { createRoleLogins, urlAs } from './role-logins.ts';
import { roundTripsSection, type RoundTripCounts } from './round-trips-section.ts';
import { readCounts, resetCounts } from './server-counts.ts';

/** Each role process of `pnpm dev` as the services declare them, logging in under its name. */
const roles = roleProcesses();
const loginOf = (r: (typeof roles)[number]) => r.name;

interface System {
  readonly apiUrl: string;
  readonly orders: Kysely<OutboxTables>;
  readonly roles: readonly RoleHandle[];
}

async function startSystem(ctx: BenchContext): Promise<System> {
  const ordersUrl = await ctx.stack.createDatabase('bench_b10_orders');
  const paymentsUrl = await ctx.stack.createDatabase('bench_b10_payments');
  await migrateService(orderService, ordersUrl);
  await migrateService(paymentService, paymentsUrl);
  await freshTopics(
    ctx.kafka,
    topicDeclarations.map((topic) => ({ topic: topic.name, partitions: topic.partitions })),
  );
  await createRoleLogins(ctx.stack, roles.map(loginOf));
  const started = await Promise.all(
    roles.map((r) =>
      startRole(ctx.stack, {
        component: `b10-${loginOf(r)}`,
        service: r.service,
        role: r.role,
        databaseUrl: urlAs(r.service === orderService ? ordersUrl : paymentsUrl, loginOf(r)),
        settings: { PAYMENT_LATENCY_MS: '0' },
      }),
    ),
  );
  const api = started[roles.findIndex((r) => r.service === orderService && r.role === 'api')];
  if (api === undefined) throw new Error('B10: the order api did not start');
  return { apiUrl: api.url, orders: benchDb<OutboxTables>(ordersUrl), roles: started };
}

/** Waits until no order is PENDING: every accepted one went through the whole pipeline. */
async function drained(orders: Kysely<OutboxTables>): Promise<void> {
  await pollUntil(
    async () => {
      const result = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM orders WHERE status = 'PENDING'`.execute(orders);
      return result.rows[0]?.n === 0 ? true : undefined;
    },
    { timeoutMs: 120_000, description: 'every B10 order through the pipeline' },
  );
}

/** Warms the roles up (prepared statements, producers), then counts what N orders cost. */
async function measure(ctx: BenchContext, system: System): Promise<RoundTripCounts> {
  const { roundTripOrders, roundTripRate } = ctx.settings;
  await offerOrders({ baseUrl: system.apiUrl, rate: roundTripRate, seconds: 1 });
  await drained(system.orders);
  const kafkaBefore = await Promise.all(system.roles.map((r) => readKafkaRequests(r.url)));
  const before = await resetCounts(ctx.stack);
  const load = await offerOrders({
    baseUrl: system.apiUrl,
    rate: roundTripRate,
    seconds: roundTripOrders / roundTripRate,
  });
  await drained(system.orders);
  const counted = await readCounts(ctx.stack, roles.map(loginOf), before);
  const kafkaAfter = await Promise.all(system.roles.map((r) => readKafkaRequests(r.url)));
  const kafka = kafkaAfter.map((after, i) => requestsSince(kafkaBefore[i] ?? new Map(), after));
  return { orders: load.committed.size, rate: roundTripRate, ...counted, kafka };
}

/**
 * B10: SQL statements, transactions and WAL per order, per role, counted by PostgreSQL, and
 * Kafka requests per order, per role, counted by each role's kafkajs client, at a modest
 * constant rate (every role its own process with its own login; 0 ms handler).
 */
export const roundTrips = defineScenario({
  id: 'B10',
  setUp: startSystem,
  measure,
  report: (_ctx, _system, counts) => roundTripsSection(counts),
  tearDown: async (system) => {
    await Promise.all(system.roles.map((r) => r.stop()));
    await system.orders.destroy();
  },
});
