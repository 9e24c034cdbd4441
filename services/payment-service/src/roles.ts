import { startServiceProcess, type RunningService } from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import type { PaymentServiceConfig } from './config.ts';
import type { PaymentDatabase } from './database/schema.ts';
import { startOrderInbox } from './inbox/start-order-inbox.ts';
import { startPaymentProcessor } from './inbox/start-payment-processor.ts';
import { startPaymentRelay } from './relay/start-payment-relay.ts';

export const paymentRoles = ['api', 'relay', 'consumer', 'processor'] as const;
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
export async function startPaymentService(options: {
  config: PaymentServiceConfig;
  roles: readonly PaymentRole[];
  logger: Logger;
}): Promise<RunningPaymentService> {
  const { config, roles, logger } = options;
  const running = await startServiceProcess<PaymentDatabase>({
    config,
    logger,
    needsKafka: rolesNeedKafka(roles),
    workers: ({ db, kafka, metrics }) => [
      ...(kafka && roles.includes('relay')
        ? [() => startPaymentRelay({ db, kafka, logger, metrics, config })]
        : []),
      ...(roles.includes('processor')
        ? [() => startPaymentProcessor({ db, logger, metrics, config })]
        : []),
      ...(kafka && roles.includes('consumer')
        ? [() => startOrderInbox({ db, kafka, logger, metrics, groupId: config.consumerGroupId })]
        : []),
    ],
    api: roles.includes('api')
      ? ({ db, registry }) => buildApp({ db, logger: logger.child({ role: 'api' }), registry })
      : undefined,
  });
  logger.info({ roles, url: running.url }, 'payment-service started');
  return running;
}
