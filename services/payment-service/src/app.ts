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
import type { PaymentDatabase } from './database/schema.ts';
import { registerPaymentRoutes } from './payments/payment-routes.ts';

export interface PaymentAppDeps {
  readonly db: Kysely<PaymentDatabase>;
  readonly logger: Logger;
  /** Served at /metrics; the outbox metrics are registered in it by the caller. */
  readonly registry: Registry;
  /** Largest accepted request body, bytes. */
  readonly bodyLimit?: number;
}

/**
 * The HTTP API of payment-service: read-only views of payments. Like every API here it has no
 * Kafka dependency, so Kafka being down never affects it.
 */
export function buildApp(deps: PaymentAppDeps): FastifyInstance {
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
  registerPaymentRoutes(app, { db: deps.db });
  return app;
}
