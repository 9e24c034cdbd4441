import type { StallWatch } from '@outbox-inbox/outbox/ops';
import { buildServiceApp, type AdmissionOptions } from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
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
  /** The process's workers' stall reports, shown by /health/ready. */
  readonly stalls?: StallWatch;
  /** Requests run at once and the longest wait for a turn before a 503 (service-kit's default when unset). */
  readonly admission?: AdmissionOptions;
}

/**
 * The HTTP API of payment-service: read-only views of payments. Like every API here it has no
 * Kafka dependency, so Kafka being down never affects it. Request ids, validation, errors,
 * health and metrics come from service-kit; the payment routes are this service's own.
 */
export function buildApp(deps: PaymentAppDeps): FastifyInstance {
  return buildServiceApp({
    ...deps,
    title: 'payment-service',
    routes: (app) => registerPaymentRoutes(app, { db: deps.db }),
  });
}
