import { createOutboxNotifier, startInboxProcessor, type Worker } from '@outbox-inbox/outbox';
import type { OutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { InboxProcessorHooks } from '@outbox-inbox/outbox/testing';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PaymentServiceConfig } from '../config.ts';
import type { PaymentDatabase } from '../database/schema.ts';
import { handleOrderCancelled } from '../payments/handle-order-cancelled.ts';
import { handleOrderCreatedBatch } from '../payments/handle-order-created-batch.ts';
import { simulatedGateway } from '../payments/payment-gateway.ts';

/**
 * The `processor` role: handles inbox rows (each order's events in order, each row's effect, its outbox events
 * and its processed mark committed together); failures retry with backoff and end
 * as dead rows instead of blocking other orders.
 */
export async function startPaymentProcessor(deps: {
  db: Kysely<PaymentDatabase>;
  logger: Logger;
  metrics: OutboxMetrics;
  config: PaymentServiceConfig;
  /** From the caller of the service's start function (see ServiceHooks); none in production. */
  hooks?: InboxProcessorHooks | undefined;
}): Promise<Worker> {
  return startInboxProcessor({
    db: deps.db,
    logger: deps.logger.child({ role: 'processor' }),
    metrics: deps.metrics,
    ...(deps.hooks ? { hooks: deps.hooks } : {}),
    listen: { connectionString: deps.config.databaseSessionUrl },
    // The handlers enqueue without a NOTIFY in the row's transaction; this wakes the relays.
    relayNotifier: createOutboxNotifier(deps.db, deps.logger),
    handlers: {
      // The batch form: a claim's orders cost a constant number of statements, not a few each
      // (bench/analysis.md, "Set-based processor: statements per row").
      OrderCreated: handleOrderCreatedBatch(simulatedGateway(deps.config.payments)),
      OrderCancelled: handleOrderCancelled(),
    },
    options: {
      concurrency: deps.config.processor.concurrency,
      batchSize: deps.config.processor.batchSize,
      notify: deps.config.processor.notify,
      maxAttempts: deps.config.processor.maxAttempts,
      handlerTimeoutMs: deps.config.processor.handlerTimeoutMs,
    },
  });
}
