import { defineScenario, type BenchContext } from '../../context.ts';
import { offerOrders } from '../../load.ts';
import { readKafkaRequests, requestsSince } from '../../role-system/kafka-requests.ts';
import { readCounts, resetCounts } from '../../role-system/server-counts.ts';
import {
  startRoleSystem,
  systemRoles,
  untilNothingPending,
  type RoleSystem,
} from '../../role-system/start-role-system.ts';
import { roundTripsSection, type RoundTripCounts } from './round-trips-section.ts';

const drained = (system: RoleSystem) =>
  untilNothingPending(system.orders, 'every B10 order through the pipeline');

/** Warms the roles up (prepared statements, producers), then counts what N orders cost. */
async function measure(ctx: BenchContext, system: RoleSystem): Promise<RoundTripCounts> {
  const { roundTripOrders, roundTripRate } = ctx.settings;
  await offerOrders({ baseUrl: system.apiUrl, rate: roundTripRate, seconds: 1 });
  await drained(system);
  const kafkaBefore = await Promise.all(system.roles.map((r) => readKafkaRequests(r.url)));
  const before = await resetCounts(ctx.stack);
  const load = await offerOrders({
    baseUrl: system.apiUrl,
    rate: roundTripRate,
    seconds: roundTripOrders / roundTripRate,
  });
  await drained(system);
  const counted = await readCounts(
    ctx.stack,
    systemRoles.map((r) => r.name),
    before,
  );
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
  setUp: (ctx) => startRoleSystem(ctx, { id: 'b10', settings: { PAYMENT_LATENCY_MS: '0' } }),
  measure,
  report: (_ctx, _system, counts) => roundTripsSection(counts),
  tearDown: (system) => system.stop(),
});
