import type { KafkaClient, OutboxTables } from '@outbox-inbox/outbox';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { ServiceConfig } from '../config/service-config.ts';
import { createDatabase } from '../database/create-database.ts';
import { buildOpsApp } from '../http/build-ops-app.ts';
import { createKafka } from '../infrastructure/kafka.ts';
import { createKafkaRequestsMetric } from '../metrics/kafka-requests.ts';
import type {
  RoleContext,
  RoleDeclaration,
  RoleDeclarations,
  RunningService,
  ServiceContext,
  StartServiceOptions,
} from '../service/role-declaration.ts';
import type { HttpHooks } from '../service/service-hooks.ts';
import { startInOrder, type Stoppable } from './roles.ts';

/**
 * Starts the chosen roles of a service against one database pool, one Kafka client (when a
 * chosen role needs one) and one metrics registry: the pool, then the workers in the order
 * they are declared, then the HTTP server (the api, or without it the health + metrics server
 * on OPS_PORT when set). `stop()` stops accepting requests first, then lets the workers finish
 * their unit of work, then closes the pool.
 */
export async function startServiceRoles<
  Role extends string,
  DB extends OutboxTables,
  Config extends ServiceConfig,
>(
  declarations: RoleDeclarations<Role, DB, Config>,
  options: StartServiceOptions<Role, Config>,
): Promise<RunningService> {
  const { config, logger } = options;
  const chosen = declaredOrder(declarations).filter((role) => options.roles.includes(role));
  const needsKafka = chosen.some((role) => declarations[role].kind === 'kafka-worker');
  const context = await createServiceContext<DB>(config, logger, needsKafka);
  const contextOf = (role: Role): RoleContext<DB, Config> => ({
    db: context.db,
    registry: context.registry,
    metrics: context.metrics,
    config,
    logger: logger.child({ role }),
    hooks: options.hooks,
  });
  let url: string | undefined;
  const serve = async (app: FastifyInstance, port: number | undefined): Promise<Stoppable> => {
    url = await app.listen({ host: config.host, port });
    return { stop: () => app.close() };
  };
  const api = chosen.find((role) => declarations[role].kind === 'api');
  const running = await startInOrder([
    async () => ({ stop: () => context.db.destroy() }),
    ...chosen.flatMap((role) => workerStart(declarations[role], contextOf(role), context.kafka)),
    ...(api !== undefined
      ? [() => serve(apiApp(declarations[api], contextOf(api), options.hooks?.http), config.port)]
      : []),
    ...(api === undefined && config.opsPort !== undefined
      ? [() => serve(opsApp(context, logger), config.opsPort)]
      : []),
  ]);
  return { stop: running.stop, url };
}

/** The roles in the order the service declares them: its workers start in this order. */
function declaredOrder<Role extends string>(declarations: Readonly<Record<Role, unknown>>): Role[] {
  return Object.keys(declarations) as Role[];
}

/** A worker's start with its context; none for the api, which is served after every worker. */
function workerStart<DB, Config extends ServiceConfig>(
  declaration: RoleDeclaration<DB, Config>,
  context: RoleContext<DB, Config>,
  kafka: KafkaClient | undefined,
): (() => Promise<Stoppable>)[] {
  switch (declaration.kind) {
    case 'api':
      return [];
    case 'worker':
      return [() => declaration.start(context)];
    case 'kafka-worker':
      if (kafka === undefined) throw new Error('a Kafka role started without a Kafka client');
      return [() => declaration.start({ ...context, kafka })];
  }
}

function apiApp<DB, Config extends ServiceConfig>(
  declaration: RoleDeclaration<DB, Config>,
  context: RoleContext<DB, Config>,
  httpHooks: HttpHooks | undefined,
): FastifyInstance {
  if (declaration.kind !== 'api') throw new Error('not an api role');
  const app = declaration.app(context);
  const beforeReply = httpHooks?.beforeReply;
  if (beforeReply !== undefined) callBeforeEachReply(app, beforeReply);
  return app;
}

/** Health and metrics for a process without the api, so each role can be probed and scraped. */
function opsApp<DB>(context: ServiceContext<DB>, logger: Logger): FastifyInstance {
  return buildOpsApp({
    db: context.db,
    logger: logger.child({ role: 'ops' }),
    registry: context.registry,
    stalls: context.metrics.stalls,
  });
}

/**
 * How often the event-loop lag histogram samples, in ms. prom-client's default, 10 ms, wakes
 * every process a hundred times a second for it: about 5 ms of CPU per second in a process with
 * nothing else to do, measured, which across nine idle role processes was a fifth of an idle
 * stack's CPU. A sample every 250 ms still records a blocked loop in full (the late timer
 * measures how long it was blocked); it only sees fewer of the short delays.
 */
const EVENT_LOOP_SAMPLE_MS = 250;

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
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
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
