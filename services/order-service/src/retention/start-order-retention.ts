import type { Worker } from '@outbox-inbox/outbox';
import { startServiceRetention, type ServiceRetentionDeps } from '@outbox-inbox/service-kit';
import type { OrderServiceConfig } from '../config.ts';
import type { OrderDatabase } from '../database/schema.ts';

/**
 * The `retention` role: the library tables' windows, and the idempotency keys, which go once
 * older than the retry window (a retry after it creates a new order).
 */
export async function startOrderRetention(
  deps: Omit<ServiceRetentionDeps<OrderDatabase>, 'tables' | 'config'> & {
    readonly config: OrderServiceConfig;
  },
): Promise<Worker> {
  return startServiceRetention({
    ...deps,
    tables: [
      {
        table: 'idempotency_key',
        column: 'created_at',
        olderThan: deps.config.idempotencyKeyWindowMs,
      },
    ],
  });
}
