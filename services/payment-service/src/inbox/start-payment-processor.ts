import { createOutboxNotifier, startInboxProcessor, type Worker } from '@outbox-inbox/outbox';
import type { RoleContext } from '@outbox-inbox/service-kit';
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
export async function startPaymentProcessor(
  deps: RoleContext<PaymentDatabase, PaymentServiceConfig>,
): Promise<Worker> {
  const hooks = deps.hooks?.inboxProcessor;
  return startInboxProcessor({
    db: deps.db,
    logger: deps.logger,
    metrics: deps.metrics,
    ...(hooks ? { hooks } : {}),
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
