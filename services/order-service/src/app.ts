import type { StallWatch } from '@outbox-inbox/outbox/ops';
import {
  buildServiceApp,
  defaultAdmission,
  type AdmissionOptions,
} from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { OrderDatabase } from './database/schema.ts';
import { ORDER_API_MAX_IN_FLIGHT } from './orders/order-group-commit.ts';
import { registerOrderRoutes } from './orders/order-routes.ts';

export interface OrderAppDeps {
  readonly db: Kysely<OrderDatabase>;
  readonly logger: Logger;
  /** Served at /metrics; the outbox metrics are registered in it by the caller. */
  readonly registry: Registry;
  /** Largest accepted request body, bytes. */
  readonly bodyLimit?: number;
  /** The process's workers' stall reports, shown by /health/ready. */
  readonly stalls?: StallWatch;
  /** Requests run at once and the longest wait for a turn before a 503 (two groups' worth when unset). */
  readonly admission?: AdmissionOptions;
}

/**
 * The HTTP API of order-service. It has no Kafka dependency on purpose: a write handler only
 * writes rows (R-DIST-OBX-X1); the relay publishes them. Request ids, validation, errors,
 * health and metrics come from service-kit; the order routes are this service's own.
 */
export function buildApp(deps: OrderAppDeps): FastifyInstance {
  return buildServiceApp({
    ...deps,
    admission: deps.admission ?? { ...defaultAdmission, maxInFlight: ORDER_API_MAX_IN_FLIGHT },
    title: 'order-service',
    routes: (app) => registerOrderRoutes(app, { db: deps.db }),
  });
}
