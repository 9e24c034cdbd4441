import { startServiceProcess, type RunningService } from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';
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

export type RunningOrderService = RunningService;

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
  const running = await startServiceProcess<OrderDatabase>({
    config,
    logger,
    needsKafka: rolesNeedKafka(roles),
    workers: ({ db, kafka, metrics }) => [
      ...(kafka && roles.includes('relay')
        ? [() => startOrderRelay({ db, kafka, logger, metrics, config })]
        : []),
      ...(kafka && roles.includes('consumer')
        ? [
            () =>
              startPaymentConsumer({ db, kafka, logger, metrics, groupId: config.consumerGroupId }),
          ]
        : []),
    ],
    api: roles.includes('api')
      ? ({ db, registry }) =>
          buildApp({
            db,
            logger: logger.child({ role: 'api' }),
            registry,
            benchmarkSkipOutbox: config.benchmarkSkipOutbox,
          })
      : undefined,
  });
  if (config.benchmarkSkipOutbox && roles.includes('api')) {
    logger.warn('BENCHMARK_SKIP_OUTBOX=true: orders are created WITHOUT their outbox events');
  }
  logger.info({ roles, url: running.url }, 'order-service started');
  return running;
}
