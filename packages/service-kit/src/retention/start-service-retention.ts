import type { OutboxTables, Worker } from '@outbox-inbox/outbox';
import {
  createRetentionMetrics,
  startRetentionJob,
  type RetentionTable,
} from '@outbox-inbox/outbox/ops';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ServiceConfig } from '../config/service-config.ts';

export interface ServiceRetentionDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly config: ServiceConfig;
  /** The service's own tables and their windows (order-service: its idempotency keys). */
  readonly tables?: readonly RetentionTable[];
}

/**
 * The `retention` role of any service: the library's retention job with the RETENTION_*
 * windows, every RETENTION_INTERVAL_SECONDS, under the retention lock (one instance at a
 * time), reporting `outbox_retention_*` metrics in the process's registry. With RELAY_MODE=cdc
 * outbox rows go by age: nothing marks them published.
 */
export async function startServiceRetention<DB extends OutboxTables>(
  deps: ServiceRetentionDeps<DB>,
): Promise<Worker> {
  const { retention } = deps.config;
  return startRetentionJob({
    db: deps.db,
    logger: deps.logger.child({ role: 'retention' }),
    metrics: createRetentionMetrics(deps.registry),
    intervalMs: retention.intervalMs,
    retention: {
      olderThan: retention.outboxWindowMs,
      outboxPublishedBy: deps.config.relay.mode === 'cdc' ? 'cdc' : 'relay',
      processedEventsOlderThan: retention.processedEventWindowMs,
      inboxOlderThan: retention.inboxWindowMs,
      parkedOlderThan: retention.parkedWindowMs,
      tables: deps.tables ?? [],
      batchSize: retention.batchSize,
    },
  });
}
