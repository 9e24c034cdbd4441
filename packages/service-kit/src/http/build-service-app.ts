import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { registerHealthRoutes } from '../health/health-routes.ts';
import { registerMetricsRoute } from '../metrics/metrics-route.ts';
import { installErrorHandling } from './error-handling.ts';
import { installStrictValidation } from './validator.ts';

/**
 * A service's API without its domain routes: request ids, strict validation, problem+json
 * errors, health and metrics, so every service answers these the same way. The service
 * registers its own routes on the returned instance.
 */
export function buildServiceApp<DB>(deps: {
  readonly db: Kysely<DB>;
  readonly logger: Logger;
  /** Served at /metrics. */
  readonly registry: Registry;
  /** Largest accepted request body, bytes; 16 KiB when unset. */
  readonly bodyLimit?: number | undefined;
}): FastifyInstance {
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
  return app;
}
