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
import type { RoleBasics, WorkerRoleDeclaration } from '../service/role-declaration.ts';

export interface ServiceRetentionDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  /** Named after the role by the process that starts it. */
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
    logger: deps.logger,
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

/**
 * The `retention` role, declared as a service declares it: the library's tables, and the
 * service's own `tables` (read off its configuration) when it has some.
 */
export function retentionRole<DB extends OutboxTables, Config extends ServiceConfig>(
  basics: RoleBasics & { readonly tables?: (config: Config) => readonly RetentionTable[] },
): WorkerRoleDeclaration<DB, Config> {
  const { tables, ...rest } = basics;
  return {
    ...rest,
    kind: 'worker',
    start: (context) =>
      startServiceRetention({ ...context, tables: tables?.(context.config) ?? [] }),
  };
}
