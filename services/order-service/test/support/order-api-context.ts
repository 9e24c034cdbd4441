import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
import { createDatabase } from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import { inject } from 'vitest';
// Declares the `stackName` the global setup provides.
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { buildApp, migrateDatabase, type OrderDatabase } from '../../src/index.ts';

export interface OrderApiContext {
  readonly stack: Stack;
  readonly databaseUrl: string;
  readonly db: Kysely<OrderDatabase>;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** A fresh, migrated order database on the run's PostgreSQL and the app built on it. */
export async function createOrderApiContext(): Promise<OrderApiContext> {
  const stack = Stack.open(inject('stackName'));
  const databaseUrl = await stack.createDatabase(`orders_${randomUUID().slice(0, 8)}`);
  const logger = pino({ level: 'silent' });
  await migrateDatabase({ url: databaseUrl, logger });
  const db = createDatabase<OrderDatabase>({
    url: databaseUrl,
    poolSize: 5,
    logger,
    connectTimeoutMs: 1000,
  });
  const registry = new Registry();
  createOutboxMetrics(registry, db);
  const app = buildApp({ db, logger, registry, bodyLimit: 2048 });
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

/** Rows written so far: what "nothing partial is ever written" is checked against. */
export async function countRows(
  db: Kysely<OrderDatabase>,
): Promise<{ orders: number; outbox: number }> {
  const orders = await db
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const outbox = await db
    .selectFrom('outbox_event')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return { orders: Number(orders.n), outbox: Number(outbox.n) };
}

export const validOrder = Object.freeze({
  customerId: 'customer-1',
  amount: 4200,
  currency: 'EUR',
});
