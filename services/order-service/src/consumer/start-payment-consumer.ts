import { topics, validate } from '@outbox-inbox/contracts';
import { startDedupConsumer, type Worker } from '@outbox-inbox/outbox';
import type { KafkaRoleContext } from '@outbox-inbox/service-kit';
import type { OrderServiceConfig } from '../config.ts';
import type { OrderDatabase } from '../database/schema.ts';
import { applyPaymentEvents } from './apply-payment-event.ts';

/** Name of this dedup consumer's rows in `processed_event`. */
export const PAYMENT_CONSUMER_NAME = 'order-status';

/**
 * The `consumer` role: payment.events → order status, through a dedup consumer (a
 * `processed_event` row in the same transaction as the update). Events that fail their
 * contract are parked by the library, never applied.
 */
export async function startPaymentConsumer(
  context: KafkaRoleContext<OrderDatabase, OrderServiceConfig>,
): Promise<Worker> {
  const { logger, hooks } = context;
  return startDedupConsumer({
    db: context.db,
    kafka: context.kafka,
    logger,
    metrics: context.metrics,
    ...(hooks?.dedupConsumer ? { hooks: hooks.dedupConsumer } : {}),
    options: {
      groupId: context.config.consumerGroupId,
      topics: [topics.paymentEvents],
      consumerName: PAYMENT_CONSUMER_NAME,
      validate: (event) => validate(event.eventType, event.payload),
    },
    // The batch form: a fetch's results cost three statements, not three per event.
    handleBatch: (trx, events) => applyPaymentEvents(trx, events, logger),
  });
}
