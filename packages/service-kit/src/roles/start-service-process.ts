import type { KafkaClient, OutboxTables } from '@outbox-inbox/outbox';
import { createOutboxMetrics, type OutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { ServiceConfig } from '../config/service-config.ts';
import { createDatabase } from '../database/create-database.ts';
import { buildOpsApp } from '../http/build-ops-app.ts';
import { createKafka } from '../infrastructure/kafka.ts';
import { createKafkaRequestsMetric } from '../metrics/kafka-requests.ts';
import type { HttpHooks } from '../service/service-hooks.ts';
import { startInOrder, type Stoppable } from './roles.ts';

/** What a service's roles share inside one process. */
export interface ServiceContext<DB> {
  readonly db: Kysely<DB>;
  /** Undefined when no role of this process needs Kafka. */
  readonly kafka: KafkaClient | undefined;
  /** Served at /metrics by the api (or ops) server. */
  readonly registry: Registry;
  /** The workers report stalls to `metrics.stalls`; give it to the api's health route. */
  readonly metrics: OutboxMetrics;
}

export interface RunningService extends Stoppable {
  /** Where the api (or, without it, the health + metrics server) listens, e.g. http://127.0.0.1:3001. */
  readonly url: string | undefined;
}

/**
 * Starts a service's roles against one database pool, one Kafka client and one metrics
 * registry: the pool, then the workers in the order given, then the HTTP server (the api, or
 * without it the health + metrics server on OPS_PORT when set). `stop()` stops accepting
 * requests first, then lets the workers finish their unit of work, then closes the pool.
 */
export async function startServiceProcess<DB extends OutboxTables>(options: {
  config: ServiceConfig;
  logger: Logger;
  needsKafka: boolean;
  workers: (context: ServiceContext<DB>) => readonly (() => Promise<Stoppable>)[];
  /** Builds the api role's app; undefined when this process runs no api. */
  api: ((context: ServiceContext<DB>) => FastifyInstance) | undefined;
  /** The api's hooks (a test harness's; none in a deployment). */
  httpHooks?: HttpHooks | undefined;
}): Promise<RunningService> {
  const { config, logger, api } = options;
  const context = await createServiceContext<DB>(config, logger, options.needsKafka);
  const { db, registry, metrics } = context;
  let url: string | undefined;

  const running = await startInOrder([
    async () => ({ stop: () => db.destroy() }),
    ...options.workers(context),
    ...(api !== undefined
      ? [
          async () => {
            const app = api(context);
            const beforeReply = options.httpHooks?.beforeReply;
            if (beforeReply !== undefined) callBeforeEachReply(app, beforeReply);
            url = await app.listen({ host: config.host, port: config.port });
            return { stop: () => app.close() };
          },
        ]
      : []),
    ...(api === undefined && config.opsPort !== undefined
      ? [
          async () => {
            const app = buildOpsApp({
              db,
              logger: logger.child({ role: 'ops' }),
              registry,
              stalls: metrics.stalls,
            });
            url = await app.listen({ host: config.host, port: config.opsPort });
            return { stop: () => app.close() };
          },
        ]
      : []),
  ]);
  return { stop: running.stop, url };
}

/** The pool, the metrics registry with the outbox's metrics, and the Kafka client when needed. */
async function createServiceContext<DB extends OutboxTables>(
  config: ServiceConfig,
  logger: Logger,
  needsKafka: boolean,
): Promise<ServiceContext<DB>> {
  const db = createDatabase<DB>({
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    prepareStatements: config.databasePrepareStatements,
    logger,
  });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = createOutboxMetrics(registry, db, {
    stallAfterMs: config.stallAfterMs,
    outboxPublishedBy: config.relay.mode === 'cdc' ? 'cdc' : 'relay',
  });
  const kafka = needsKafka
    ? await createKafka({
        clientId: config.kafkaClientId,
        brokers: config.kafkaBrokers,
        logger,
        client: config.kafkaClient,
        onRequest: createKafkaRequestsMetric(registry),
      })
    : undefined;
  return { db, kafka, registry, metrics };
}

/** Has each reply wait for the harness's `beforeReply`, told the request's route and status. */
function callBeforeEachReply(
  app: FastifyInstance,
  beforeReply: NonNullable<HttpHooks['beforeReply']>,
): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url ?? request.url;
    await beforeReply({ method: request.method, route, statusCode: reply.statusCode });
    return payload;
  });
}
