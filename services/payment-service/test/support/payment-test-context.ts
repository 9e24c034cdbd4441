import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
// Declares the `stackName` the global setup provides.
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import { createDatabase } from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { inject } from 'vitest';
import { buildApp, migrateDatabase, type PaymentDatabase } from '../../src/index.ts';

export interface PaymentTestContext {
  readonly stack: Stack;
  readonly databaseUrl: string;
  readonly db: Kysely<PaymentDatabase>;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** A fresh, migrated payment database on the run's PostgreSQL and the app built on it. */
export async function createPaymentTestContext(): Promise<PaymentTestContext> {
  const stack = Stack.open(inject('stackName'));
  const databaseUrl = await stack.createDatabase(`payments_${randomUUID().slice(0, 8)}`);
  const logger = pino({ level: 'silent' });
  await migrateDatabase({ url: databaseUrl, logger });
  const db = createDatabase<PaymentDatabase>({
    url: databaseUrl,
    poolSize: 5,
    logger,
    connectTimeoutMs: 1000,
  });
  const registry = new Registry();
  createOutboxMetrics(registry, db);
  const app = buildApp({ db, logger, registry });
  await app.ready();
  return {
    stack,
    databaseUrl,
    db,
    app,
    async close() {
      await app.close();
      await db.destroy();
    },
  };
}
