import { startRelay, type OutboxMetrics, type Worker } from '@outbox-inbox/outbox';
import { crashAfterPublishHook } from '@outbox-inbox/service-kit';
import type { Kafka } from 'kafkajs';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PaymentServiceConfig } from '../config.ts';
import type { PaymentDatabase } from '../database/schema.ts';

/** The `relay` role: publishes the payment outbox (PaymentCompleted, PaymentFailed, PaymentRefunded) to payment.events. */
export async function startPaymentRelay(deps: {
  db: Kysely<PaymentDatabase>;
  kafka: Kafka;
  logger: Logger;
  metrics: OutboxMetrics;
  config: PaymentServiceConfig;
}): Promise<Worker> {
  const logger = deps.logger.child({ role: 'relay' });
  return startRelay({
    db: deps.db,
    kafka: deps.kafka,
    logger,
    metrics: deps.metrics,
    listen: { connectionString: deps.config.databaseUrl },
    options: {
      batchSize: deps.config.relay.batchSize,
      pollIntervalMs: deps.config.relay.pollIntervalMs,
      notify: deps.config.relay.notify,
      clientId: `${deps.config.kafkaClientId}-relay`,
      hooks: crashAfterPublishHook(deps.config.relay.crashAfterPublish, logger),
    },
  });
}
