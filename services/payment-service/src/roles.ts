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

export interface RunningPaymentService extends Stoppable {
  /** Where the api (or, without it, the health + metrics server) listens, e.g. http://127.0.0.1:3002. */
  readonly url: string | undefined;
}

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
  const db = createDatabase<PaymentDatabase>({
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
      ? [() => startPaymentRelay({ db, kafka, logger, metrics, config })]
      : []),
    ...(roles.includes('processor')
      ? [() => startPaymentProcessor({ db, logger, metrics, config })]
      : []),
    ...(kafka && roles.includes('consumer')
      ? [() => startOrderInbox({ db, kafka, logger, metrics, groupId: config.consumerGroupId })]
      : []),
    ...(roles.includes('api')
      ? [
          async () => {
            const app = buildApp({ db, logger: logger.child({ role: 'api' }), registry });
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
  logger.info({ roles, url }, 'payment-service started');
  return { stop: running.stop, url };
}
