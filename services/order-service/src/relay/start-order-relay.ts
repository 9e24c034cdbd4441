import type { Worker } from '@outbox-inbox/outbox';
import { startServiceRelay, type ServiceRelayDeps } from '@outbox-inbox/service-kit';
import type { OrderDatabase } from '../database/schema.ts';

/** The `relay` role: publishes the order outbox (OrderCreated, OrderCancelled) to order.events. */
export async function startOrderRelay(deps: ServiceRelayDeps<OrderDatabase>): Promise<Worker> {
  return startServiceRelay(deps);
}
