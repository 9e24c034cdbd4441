import { topics, validate } from '@outbox-inbox/contracts';
import { startDedupConsumer, type Worker, type KafkaClient } from '@outbox-inbox/outbox';
import type { OutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { DedupConsumerHooks } from '@outbox-inbox/outbox/testing';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { OrderDatabase } from '../database/schema.ts';
import { applyPaymentEvents } from './apply-payment-event.ts';

/** Name of this dedup consumer's rows in `processed_event`. */
export const PAYMENT_CONSUMER_NAME = 'order-status';

/**
 * The `consumer` role: payment.events → order status, through a dedup consumer (a
 * `processed_event` row in the same transaction as the update). Events that fail their
 * contract are parked by the library, never applied.
 */
export async function startPaymentConsumer(deps: {
  db: Kysely<OrderDatabase>;
  kafka: KafkaClient;
  logger: Logger;
  metrics: OutboxMetrics;
  groupId: string;
  hooks?: DedupConsumerHooks | undefined;
}): Promise<Worker> {
  const logger = deps.logger.child({ role: 'consumer' });
  return startDedupConsumer({
    db: deps.db,
    kafka: deps.kafka,
    logger,
    metrics: deps.metrics,
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
    options: {
      groupId: deps.groupId,
      topics: [topics.paymentEvents],
      consumerName: PAYMENT_CONSUMER_NAME,
      validate: (event) => validate(event.eventType, event.payload),
    },
    // The batch form: a fetch's results cost three statements, not three per event.
    handleBatch: (trx, events) => applyPaymentEvents(trx, events, logger),
  });
}
