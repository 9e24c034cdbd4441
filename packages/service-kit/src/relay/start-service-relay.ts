import { startRelay, type OutboxTables, type Worker } from '@outbox-inbox/outbox';
import { startCdcRelay } from '@outbox-inbox/outbox/cdc';
import type { ServiceConfig } from '../config/service-config.ts';
import type {
  KafkaRoleContext,
  KafkaWorkerRoleDeclaration,
  RoleBasics,
} from '../service/role-declaration.ts';

/**
 * The `relay` role of any service. With RELAY_MODE=polling (the default) it publishes its outbox with the shared RELAY_* settings, woken
 * by NOTIFY on its own connection, under the client id `<KAFKA_CLIENT_ID>-relay`. Which topics
 * it publishes to is decided by the rows the service enqueues, not here. Its producer never asks
 * the broker to create a topic: the service's migrate provisions them as the contracts declare,
 * and a row for any other topic is set aside (FAILED) where an operator sees it.
 *
 * With RELAY_MODE=cdc, Debezium on Kafka Connect publishes instead, through a connector named
 * `<KAFKA_CLIENT_ID>-outbox` with its own slot; the role registers it and reports its state and
 * slot lag (see startCdcRelay).
 */
export async function startServiceRelay<DB extends OutboxTables>(
  deps: KafkaRoleContext<DB, ServiceConfig>,
): Promise<Worker> {
  const { logger } = deps;
  const { relay } = deps.config;
  if (relay.mode === 'cdc') {
    return startCdcRelay({
      db: deps.db,
      kafka: deps.kafka,
      connectUrl: relay.connectUrl,
      connector: {
        name: `${deps.config.kafkaClientId}-outbox`,
        // Debezium's replication connection is a session: never through a transaction pooler.
        databaseUrl: deps.config.databaseSessionUrl,
      },
      logger,
      metrics: deps.metrics,
    });
  }
  return startRelay({
    db: deps.db,
    kafka: deps.kafka,
    logger,
    metrics: deps.metrics,
    listen: { connectionString: deps.config.databaseSessionUrl },
    options: {
      batchSize: relay.batchSize,
      pollIntervalMs: relay.pollIntervalMs,
      notify: relay.notify,
      clientId: `${deps.config.kafkaClientId}-relay`,
      allowAutoTopicCreation: false,
      hooks: deps.hooks?.relay ?? {},
    },
  });
}

/** The `relay` role, declared as a service declares it: `relay: relayRole({ port, summary })`. */
export function relayRole<DB extends OutboxTables, Config extends ServiceConfig>(
  basics: RoleBasics,
): KafkaWorkerRoleDeclaration<DB, Config> {
  return { ...basics, kind: 'kafka-worker', start: (context) => startServiceRelay(context) };
}
