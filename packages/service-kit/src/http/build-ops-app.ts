import type { StallWatch } from '@outbox-inbox/outbox/ops';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { registerHealthRoutes } from '../health/health-routes.ts';
import { registerMetricsRoute } from '../metrics/metrics-route.ts';
import { installErrorHandling } from './error-handling.ts';

/**
 * Health and metrics for a process that runs no API role (a relay, a consumer, a processor
 * on its own), so it can be probed and scraped like the API.
 */
export function buildOpsApp<DB>(deps: {
  db: Kysely<DB>;
  logger: FastifyBaseLogger;
  registry: Registry;
  /** The process's workers' stall reports, shown by /health/ready. */
  stalls?: StallWatch | undefined;
}): FastifyInstance {
  const app = Fastify({ loggerInstance: deps.logger });
  installErrorHandling(app);
  registerHealthRoutes(app, { db: deps.db, stalls: deps.stalls });
  registerMetricsRoute(app, deps.registry);
  return app;
}
