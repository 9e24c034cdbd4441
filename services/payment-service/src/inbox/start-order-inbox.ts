import { topics, validate } from '@outbox-inbox/contracts';
import { startInboxWriter, type Worker } from '@outbox-inbox/outbox';
import type { KafkaRoleContext } from '@outbox-inbox/service-kit';
import type { PaymentServiceConfig } from '../config.ts';
import type { PaymentDatabase } from '../database/schema.ts';

/**
 * The `consumer` role: order.events → `inbox_event`, then the Kafka offset is committed. It does
 * no business work, so a burst of orders is absorbed at insert speed; events that fail their
 * contract are parked by the library where an operator can see them.
 */
export async function startOrderInbox(
  context: KafkaRoleContext<PaymentDatabase, PaymentServiceConfig>,
): Promise<Worker> {
  const { hooks } = context;
  return startInboxWriter({
    db: context.db,
    kafka: context.kafka,
    logger: context.logger,
    metrics: context.metrics,
    ...(hooks?.inboxWriter ? { hooks: hooks.inboxWriter } : {}),
    options: {
      groupId: context.config.consumerGroupId,
      topics: [topics.orderEvents],
      validate: (event) => validate(event.eventType, event.payload),
    },
  });
}
