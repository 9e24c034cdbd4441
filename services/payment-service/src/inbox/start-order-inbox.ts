import { topics, validate } from '@outbox-inbox/contracts';
import { startInboxWriter, type Worker, type KafkaClient } from '@outbox-inbox/outbox';
import type { OutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { InboxWriterHooks } from '@outbox-inbox/outbox/testing';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PaymentDatabase } from '../database/schema.ts';

/**
 * The `consumer` role: order.events → `inbox_event`, then the Kafka offset is committed. It does
 * no business work, so a burst of orders is absorbed at insert speed; events that fail their
 * contract are parked by the library where an operator can see them.
 */
export async function startOrderInbox(deps: {
  db: Kysely<PaymentDatabase>;
  kafka: KafkaClient;
  logger: Logger;
  metrics: OutboxMetrics;
  groupId: string;
  hooks?: InboxWriterHooks | undefined;
}): Promise<Worker> {
  return startInboxWriter({
    db: deps.db,
    kafka: deps.kafka,
    logger: deps.logger.child({ role: 'consumer' }),
    metrics: deps.metrics,
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
    options: {
      groupId: deps.groupId,
      topics: [topics.orderEvents],
      validate: (event) => validate(event.eventType, event.payload),
    },
  });
}
