import { fileURLToPath } from 'node:url';
import { topicsOwnedBy } from '@outbox-inbox/contracts';
import {
  defineService,
  type RoleDeclarations,
  startServiceRelay,
  startServiceRetention,
} from '@outbox-inbox/service-kit';
import { buildApp } from './app.ts';
import { readConfig, type PaymentServiceConfig } from './config.ts';
import { migrateDatabase } from './database/migrations.ts';
import type { PaymentDatabase } from './database/schema.ts';
import { startOrderInbox } from './inbox/start-order-inbox.ts';
import { startPaymentProcessor } from './inbox/start-payment-processor.ts';

/**
 * Each role of payment-service once: what `--roles` accepts, what `pnpm dev`, the e2e suite and
 * the bench run as the process `payment-<role>`, and what the compose file, the scrape config and
 * the table of components list (`./pnpm sync-roles`).
 */
export const paymentRoles = {
  api: {
    kind: 'api',
    port: 3002,
    summary: 'payments HTTP API',
    // Reads payments (payments/payment-routes.ts).
    access: { outbox: [], tables: [{ table: 'payments', privilege: 'SELECT' }] },
    app: ({ db, logger, registry, metrics, config }) =>
      buildApp({ db, logger, registry, stalls: metrics.stalls, admission: config.admission }),
  },
  relay: {
    kind: 'kafka-worker',
    port: 3021,
    summary: 'payment outbox → `payment.events`',
    access: { outbox: ['relay'] },
    start: (context) => startServiceRelay<PaymentDatabase>(context),
  },
  consumer: {
    kind: 'kafka-worker',
    port: 3022,
    summary: '`order.events` → inbox',
    access: { outbox: ['inbox-writer'] },
    start: startOrderInbox,
  },
  processor: {
    kind: 'worker',
    port: 3023,
    summary: 'inbox → payments',
    // payments/: the handlers insert and refund payments, write history and enqueue results.
    access: {
      outbox: ['inbox-processor', 'writer'],
      tables: [
        { table: 'payments', privilege: 'SELECT' },
        {
          table: 'payments',
          privilege: 'INSERT',
          columns: [
            'id',
            'order_id',
            'customer_id',
            'amount',
            'currency',
            'status',
            'failure_reason',
          ],
        },
        {
          table: 'payments',
          privilege: 'UPDATE',
          columns: ['status', 'refunded_at', 'updated_at'],
        },
        {
          table: 'payment_history',
          privilege: 'INSERT',
          columns: ['order_id', 'event_id', 'event_type', 'outcome'],
        },
      ],
    },
    start: startPaymentProcessor,
  },
  retention: {
    kind: 'worker',
    port: 3024,
    summary: 'deletes old finished rows',
    access: { outbox: ['retention'] },
    start: (context) => startServiceRetention<PaymentDatabase>(context),
  },
} satisfies RoleDeclarations<string, PaymentDatabase, PaymentServiceConfig>;

/** payment-service as whatever runs it sees it: its roles, programs, variables and ports. */
export const paymentService = defineService({
  name: 'payment-service',
  componentPrefix: 'payment',
  database: 'payments',
  directory: fileURLToPath(new URL('..', import.meta.url)),
  topics: topicsOwnedBy('payment-service'),
  readConfig,
  migrate: migrateDatabase,
  roles: paymentRoles,
});

export type PaymentRole = (typeof paymentService.roles)[number];
