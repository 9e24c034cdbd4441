import { pollUntil } from '@outbox-inbox/infra';
import { defaultRate, type FaultContext } from './scenario.ts';

async function traffic(context: FaultContext, orders: number, description: string) {
  const from = context.acceptedSoFar();
  await pollUntil(() => context.acceptedSoFar() >= from + orders, {
    timeoutMs: 60_000,
    description,
  });
}

/**
 * Kafka SIGKILLed under load, down for several seconds measured in orders the API accepted
 * meanwhile and until `whileDown` saw what the relay in use shows of it, then started again.
 * Scenarios 1 (polling relay) and 16 (CDC relay).
 */
export async function kafkaOutage(
  context: FaultContext,
  whileDown: () => Promise<unknown>,
): Promise<void> {
  await traffic(context, defaultRate * 2, 'traffic');
  await context.kill('kafka');
  await traffic(context, defaultRate * 5, 'orders while Kafka is down');
  await whileDown();
  await context.system.stack.start('kafka');
  context.fault('kafka restarted');
  await traffic(context, defaultRate * 2, 'traffic after');
}

/**
 * PostgreSQL SIGKILLed under load, restarted once the API refused a second's worth of orders
 * with 503. Scenarios 6 (polling relay) and 18 (CDC relay).
 */
export async function postgresOutage(context: FaultContext): Promise<void> {
  await traffic(context, defaultRate * 2, 'traffic');
  await context.kill('postgres');
  const refusedBefore = context.statusesSoFar()['503'] ?? 0;
  await pollUntil(() => (context.statusesSoFar()['503'] ?? 0) >= refusedBefore + defaultRate, {
    timeoutMs: 60_000,
    description: '503s while PostgreSQL is down',
  });
  await context.system.stack.start('postgres');
  context.fault('postgres restarted');
  await traffic(context, defaultRate * 2, 'traffic after');
}
