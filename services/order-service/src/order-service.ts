import { fileURLToPath } from 'node:url';
import { topicsOwnedBy } from '@outbox-inbox/contracts';
import {
  apiRole,
  defineService,
  relayRole,
  retentionRole,
  type RoleDeclarations,
} from '@outbox-inbox/service-kit';
import { buildApp } from './app.ts';
import { readConfig, type OrderServiceConfig } from './config.ts';
import { startPaymentConsumer } from './consumer/start-payment-consumer.ts';
import { migrateDatabase } from './database/migrations.ts';
import type { OrderDatabase } from './database/schema.ts';

/**
 * Each role of order-service once: what `--roles` accepts, what `pnpm dev`, the e2e suite and
 * the bench run as the process `order-<role>`, and what the compose file, the scrape config and
 * the table of components list (`./pnpm sync-roles`).
 */
export const orderRoles = {
  api: apiRole({ port: 3001, summary: 'orders HTTP API' }, buildApp),
  relay: relayRole({ port: 3011, summary: 'order outbox → `order.events`' }),
  consumer: {
    kind: 'kafka-worker',
    port: 3012,
    summary: '`payment.events` → order status',
    start: startPaymentConsumer,
  },
  // Idempotency keys go once older than the retry window: a retry after it creates a new order.
  retention: retentionRole({
    port: 3013,
    summary: 'deletes old finished rows and idempotency keys',
    tables: (config) => [
      { table: 'idempotency_key', column: 'created_at', olderThan: config.idempotencyKeyWindowMs },
    ],
  }),
} satisfies RoleDeclarations<string, OrderDatabase, OrderServiceConfig>;

/** order-service as whatever runs it sees it: its roles, programs, variables and ports. */
export const orderService = defineService({
  name: 'order-service',
  componentPrefix: 'order',
  database: 'orders',
  directory: fileURLToPath(new URL('..', import.meta.url)),
  topics: topicsOwnedBy('order-service'),
  readConfig,
  migrate: migrateDatabase,
  roles: orderRoles,
});

export type OrderRole = (typeof orderService.roles)[number];
