import { createOutboxMetrics } from '@outbox-inbox/outbox';
import {
  buildOpsApp,
  createDatabase,
  createKafka,
  startInOrder,
  type Stoppable,
} from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { buildApp } from './app.ts';
import type { OrderServiceConfig } from './config.ts';
import { startPaymentConsumer } from './consumer/start-payment-consumer.ts';
import type { OrderDatabase } from './database/schema.ts';
import { startOrderRelay } from './relay/start-order-relay.ts';

export const orderRoles = ['api', 'relay', 'consumer'] as const;
export type OrderRole = (typeof orderRoles)[number];

export function rolesNeedKafka(roles: readonly OrderRole[]): boolean {
  return roles.includes('relay') || roles.includes('consumer');
}

export interface RunningOrderService extends Stoppable {
  /** Where the api (or, without it, the health + metrics server) listens, e.g. http://127.0.0.1:3001. */
  readonly url: string | undefined;
}

/**
 * Starts the given roles in this process against one database pool and one Kafka client.
 * `stop()` stops accepting requests first, then lets the workers finish their batch, then
 * closes the pool.
 */
export async function startOrderService(options: {
  config: OrderServiceConfig;
  roles: readonly OrderRole[];
  logger: Logger;
}): Promise<RunningOrderService> {
  const { config, roles, logger } = options;
  const db = createDatabase<OrderDatabase>({
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    logger,
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createOutboxMetrics(registry, db);
  const kafka = rolesNeedKafka(roles)
    ? createKafka({ clientId: config.kafkaClientId, brokers: config.kafkaBrokers, logger })
    : undefined;
  let url: string | undefined;

  const running = await startInOrder([
    async () => ({ stop: () => db.destroy() }),
    ...(kafka && roles.includes('relay')
      ? [() => startOrderRelay({ db, kafka, logger, metrics, config })]
      : []),
    ...(kafka && roles.includes('consumer')
      ? [
          () =>
            startPaymentConsumer({ db, kafka, logger, metrics, groupId: config.consumerGroupId }),
        ]
      : []),
    ...(roles.includes('api')
      ? [
          async () => {
            const app = buildApp({
              db,
              logger: logger.child({ role: 'api' }),
              registry,
              benchmarkSkipOutbox: config.benchmarkSkipOutbox,
            });
            url = await app.listen({ host: config.host, port: config.port });
            return { stop: () => app.close() };
          },
        ]
      : []),
    ...(!roles.includes('api') && config.opsPort !== undefined
      ? [
          async () => {
            const app = buildOpsApp({ db, logger: logger.child({ role: 'ops' }), registry });
            url = await app.listen({ host: config.host, port: config.opsPort });
            return { stop: () => app.close() };
          },
        ]
      : []),
  ]);
  if (config.benchmarkSkipOutbox && roles.includes('api')) {
    logger.warn('BENCHMARK_SKIP_OUTBOX=true: orders are created WITHOUT their outbox events');
  }
  logger.info({ roles, url }, 'order-service started');
  return { stop: running.stop, url };
}
