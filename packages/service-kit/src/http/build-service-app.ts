import type { StallWatch } from '@outbox-inbox/outbox/ops';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { registerHealthRoutes } from '../health/health-routes.ts';
import { registerMetricsRoute } from '../metrics/metrics-route.ts';
import { installErrorHandling } from './error-handling.ts';
import { installApiDocs } from './api-docs.ts';
import { createAdmissionGate } from './admission/admission-gate.ts';
import { defaultAdmission, type AdmissionOptions } from './admission/request-admission.ts';
import { installTraceContext } from './trace-requests.ts';
import { installStrictValidation } from './validator.ts';

/**
 * A service's API without its domain routes: request ids, W3C trace context, API docs at /docs, strict validation, problem+json
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
  /** Stall reports of the workers in this process, shown by /health/ready. */
  readonly stalls?: StallWatch | undefined;
  /**
   * How many of the service's own requests run at once and how long one waits for its turn
   * before a 503 (health, metrics and docs are never held back). Defaults to 10 and 300 ms.
   */
  readonly admission?: AdmissionOptions | undefined;
  /** The title of the API docs at /docs (the service's name). */
  readonly title?: string | undefined;
  /**
   * Registers the service's own routes. Routes added here are in the API docs and the
   * request metrics; routes added to the returned instance afterwards are in neither.
   */
  readonly routes?: ((app: FastifyInstance) => void) | undefined;
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
  installTraceContext(app);
  installApiDocs(app, { title: deps.title ?? 'service API' });
  installStrictValidation(app);
  installErrorHandling(app);
  // Registered as a plugin so that it loads after the docs' plugin, which sees only the
  // routes declared after it has loaded.
  void app.register(async (api) => {
    const admission = createAdmissionGate(deps.admission ?? defaultAdmission, deps.registry);
    registerHealthRoutes(api, { db: deps.db, stalls: deps.stalls, admission });
    registerMetricsRoute(api, deps.registry);
    // Only the service's own routes wait for a slot: health and metrics answer under overload.
    admission.guard(api);
    deps.routes?.(api);
  });
  return app;
}
