import { randomUUID } from 'node:crypto';
import {
  installErrorHandling,
  installStrictValidation,
  registerHealthRoutes,
  registerMetricsRoute,
} from '@outbox-inbox/service-kit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { OrderDatabase } from './database/schema.ts';
import { registerOrderRoutes } from './orders/order-routes.ts';

export interface OrderAppDeps {
  readonly db: Kysely<OrderDatabase>;
  readonly logger: Logger;
  /** Served at /metrics; the outbox metrics are registered in it by the caller. */
  readonly registry: Registry;
  /** Largest accepted request body, bytes. */
  readonly bodyLimit?: number;
  /** BENCHMARK ONLY: create orders without their outbox row (see `BENCHMARK_SKIP_OUTBOX`). */
  readonly benchmarkSkipOutbox?: boolean;
}

/**
 * The HTTP API of order-service. It has no Kafka dependency on purpose: a write handler only
 * writes rows (R-DIST-OBX-X1); the relay publishes them.
 */
export function buildApp(deps: OrderAppDeps): FastifyInstance {
  // Typed as fastify's logger interface so the instance is a plain FastifyInstance.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance,
    bodyLimit: deps.bodyLimit ?? 16 * 1024,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // While shutting down, new requests get 503 and in-flight ones finish.
    return503OnClosing: true,
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installStrictValidation(app);
  installErrorHandling(app);
  registerHealthRoutes(app, { db: deps.db });
  registerMetricsRoute(app, deps.registry);
  registerOrderRoutes(app, {
    db: deps.db,
    benchmarkSkipOutbox: deps.benchmarkSkipOutbox ?? false,
  });
  return app;
}
