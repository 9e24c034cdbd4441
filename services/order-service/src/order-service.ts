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

/** An order's history step: the api writes a new order's first, the consumer each payment result's. */
const HISTORY_STEP = ['order_id', 'event_id', 'event_type', 'status', 'payment_status'];

/**
 * Each role of order-service once: what `--roles` accepts, what `pnpm dev`, the e2e suite and
 * the bench run as the process `order-<role>`, and what the compose file, the scrape config and
 * the table of components list (`./pnpm sync-roles`).
 */
export const orderRoles = {
  api: apiRole(
    {
      port: 3001,
      summary: 'orders HTTP API',
      // Creates, reads and cancels orders (orders/), keeps the idempotency keys' first answers,
      // reads the journey (history/read-order-journey.ts).
      access: {
        outbox: ['writer'],
        tables: [
          { table: 'orders', privilege: 'SELECT' },
          {
            table: 'orders',
            privilege: 'INSERT',
            columns: ['id', 'customer_id', 'amount', 'currency', 'status'],
          },
          { table: 'orders', privilege: 'UPDATE', columns: ['status', 'updated_at'] },
          { table: 'idempotency_key', privilege: 'INSERT', columns: ['key', 'request_hash'] },
          {
            table: 'idempotency_key',
            privilege: 'SELECT',
            columns: ['key', 'request_hash', 'response_status', 'response_body'],
          },
          {
            table: 'idempotency_key',
            privilege: 'UPDATE',
            columns: ['response_status', 'response_body'],
          },
          { table: 'order_history', privilege: 'INSERT', columns: HISTORY_STEP },
          { table: 'order_history', privilege: 'SELECT' },
        ],
      },
    },
    buildApp,
  ),
  relay: relayRole({
    port: 3011,
    summary: 'order outbox → `order.events`',
    access: { outbox: ['relay'] },
  }),
  consumer: {
    kind: 'kafka-worker',
    port: 3012,
    summary: '`payment.events` → order status',
    start: startPaymentConsumer,
    // consumer/apply-payment-event.ts: locks the orders, sets their payment columns, one history
    // step per event. It enqueues nothing.
    access: {
      outbox: ['dedup-consumer'],
      tables: [
        {
          table: 'orders',
          privilege: 'SELECT',
          columns: ['id', 'status', 'payment_status', 'payment_id', 'failure_reason'],
        },
        {
          table: 'orders',
          privilege: 'UPDATE',
          columns: ['status', 'payment_status', 'payment_id', 'failure_reason', 'updated_at'],
        },
        { table: 'order_history', privilege: 'INSERT', columns: HISTORY_STEP },
      ],
    },
  },
  // Idempotency keys go once older than the retry window: a retry after it creates a new order.
  retention: retentionRole({
    port: 3013,
    summary: 'deletes old finished rows and idempotency keys',
    // Deletes keys by age, skipping locked ones: a row lock needs UPDATE on some column, and
    // the key's date is the one whose change harms least (it cannot forge an answer).
    access: {
      outbox: ['retention'],
      tables: [
        { table: 'idempotency_key', privilege: 'DELETE' },
        { table: 'idempotency_key', privilege: 'SELECT', columns: ['ctid', 'created_at'] },
        { table: 'idempotency_key', privilege: 'UPDATE', columns: ['created_at'] },
      ],
    },
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
