import {
  startRelay,
  type OutboxMetrics,
  type OutboxTables,
  type Worker,
} from '@outbox-inbox/outbox';
import type { Kafka } from 'kafkajs';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config/service-config.ts';
import { crashAfterPublishHook } from './crash-after-publish.ts';

export interface ServiceRelayDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly metrics: OutboxMetrics;
  readonly config: ServiceConfig;
}

/**
 * The `relay` role of any service: publishes its outbox with the shared RELAY_* settings, woken
 * by NOTIFY on its own connection, under the client id `<KAFKA_CLIENT_ID>-relay`. Which topics
 * it publishes to is decided by the rows the service enqueues, not here.
 */
export async function startServiceRelay<DB extends OutboxTables>(
  deps: ServiceRelayDeps<DB>,
): Promise<Worker> {
  const logger = deps.logger.child({ role: 'relay' });
  return startRelay({
    db: deps.db,
    kafka: deps.kafka,
    logger,
    metrics: deps.metrics,
    listen: { connectionString: deps.config.databaseUrl },
    options: {
      batchSize: deps.config.relay.batchSize,
      pollIntervalMs: deps.config.relay.pollIntervalMs,
      notify: deps.config.relay.notify,
      clientId: `${deps.config.kafkaClientId}-relay`,
      hooks: crashAfterPublishHook(deps.config.relay.crashAfterPublish, logger),
    },
  });
}
