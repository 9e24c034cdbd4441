import {
  startServiceProcess,
  startServiceRetention,
  type RunningService,
  type StartServiceOptions,
} from '@outbox-inbox/service-kit';
import { buildApp } from './app.ts';
import type { PaymentServiceConfig } from './config.ts';
import type { PaymentDatabase } from './database/schema.ts';
import { startOrderInbox } from './inbox/start-order-inbox.ts';
import { startPaymentProcessor } from './inbox/start-payment-processor.ts';
import { startPaymentRelay } from './relay/start-payment-relay.ts';

export const paymentRoles = ['api', 'relay', 'consumer', 'processor', 'retention'] as const;
export type PaymentRole = (typeof paymentRoles)[number];

export function rolesNeedKafka(roles: readonly PaymentRole[]): boolean {
  return roles.includes('relay') || roles.includes('consumer');
}

export type RunningPaymentService = RunningService;

/**
 * Starts the given roles in this process against one database pool and one Kafka client.
 * `stop()` stops accepting requests first, then lets the workers finish their unit of work,
 * then closes the pool.
 */
export async function startPaymentService(
  options: StartServiceOptions<PaymentRole, PaymentServiceConfig>,
): Promise<RunningPaymentService> {
  const { config, roles, logger, hooks } = options;
  const running = await startServiceProcess<PaymentDatabase>({
    config,
    logger,
    needsKafka: rolesNeedKafka(roles),
    httpHooks: hooks?.http,
    workers: ({ db, kafka, metrics, registry }) => [
      ...(kafka && roles.includes('relay')
        ? [() => startPaymentRelay({ db, kafka, logger, metrics, config, hooks: hooks?.relay })]
        : []),
      ...(roles.includes('processor')
        ? [
            () =>
              startPaymentProcessor({ db, logger, metrics, config, hooks: hooks?.inboxProcessor }),
          ]
        : []),
      ...(kafka && roles.includes('consumer')
        ? [
            () =>
              startOrderInbox({
                db,
                kafka,
                logger,
                metrics,
                groupId: config.consumerGroupId,
                hooks: hooks?.inboxWriter,
              }),
          ]
        : []),
      ...(roles.includes('retention')
        ? [() => startServiceRetention({ db, logger, registry, config })]
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
  logger.info({ roles, url: running.url }, 'payment-service started');
  return running;
}
