import { fileURLToPath } from 'node:url';
import { topicDeclarations } from '@outbox-inbox/contracts';
import { defineService } from '@outbox-inbox/service-kit';
import { readConfig } from './config.ts';
import { migrateDatabase } from './database/migrations.ts';
import { paymentRoles, rolesNeedKafka, startPaymentService } from './roles.ts';

/** payment-service as whatever runs it sees it: its roles, programs, variables and ports. */
export const paymentService = defineService({
  name: 'payment-service',
  componentPrefix: 'payment',
  database: 'payments',
  directory: fileURLToPath(new URL('..', import.meta.url)),
  programs: { main: 'src/main.ts', migrate: 'src/migrate.ts' },
  roles: paymentRoles,
  ports: { api: 3002, relay: 3021, consumer: 3022, processor: 3023, retention: 3024 },
  topics: topicDeclarations.filter((topic) => topic.owner === 'payment-service'),
  rolesNeedKafka,
  readConfig,
  start: startPaymentService,
  migrate: migrateDatabase,
});
