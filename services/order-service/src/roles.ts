import {
  startServiceProcess,
  type RunningService,
  type StartServiceOptions,
} from '@outbox-inbox/service-kit';
import { buildApp } from './app.ts';
import type { OrderServiceConfig } from './config.ts';
import { startPaymentConsumer } from './consumer/start-payment-consumer.ts';
import type { OrderDatabase } from './database/schema.ts';
import { startOrderRelay } from './relay/start-order-relay.ts';
import { startOrderRetention } from './retention/start-order-retention.ts';

export const orderRoles = ['api', 'relay', 'consumer', 'retention'] as const;
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
export async function startOrderService(
  options: StartServiceOptions<OrderRole, OrderServiceConfig>,
): Promise<RunningOrderService> {
  const { config, roles, logger, hooks } = options;
  const running = await startServiceProcess<OrderDatabase>({
    config,
    logger,
    needsKafka: rolesNeedKafka(roles),
    httpHooks: hooks?.http,
    workers: ({ db, kafka, metrics, registry }) => [
      ...(kafka && roles.includes('relay')
        ? [() => startOrderRelay({ db, kafka, logger, metrics, config, hooks: hooks?.relay })]
        : []),
      ...(kafka && roles.includes('consumer')
        ? [
            () =>
              startPaymentConsumer({
                db,
                kafka,
                logger,
                metrics,
                groupId: config.consumerGroupId,
                hooks: hooks?.dedupConsumer,
              }),
          ]
        : []),
      ...(roles.includes('retention')
        ? [() => startOrderRetention({ db, logger, registry, config })]
        : []),
    ],
    api: roles.includes('api')
      ? ({ db, registry, metrics }) =>
          buildApp({
            db,
            logger: logger.child({ role: 'api' }),
            registry,
            stalls: metrics.stalls,
            admission: config.admission,
          })
      : undefined,
  });
  logger.info({ roles, url: running.url }, 'order-service started');
  return running;
}
