import { fileURLToPath } from 'node:url';
import { topicDeclarations } from '@outbox-inbox/contracts';
import { defineService } from '@outbox-inbox/service-kit';
import { readConfig } from './config.ts';
import { migrateDatabase } from './database/migrations.ts';
import { orderRoles, rolesNeedKafka, startOrderService } from './roles.ts';

/** order-service as whatever runs it sees it: its roles, programs, variables and ports. */
export const orderService = defineService({
  name: 'order-service',
  componentPrefix: 'order',
  database: 'orders',
  directory: fileURLToPath(new URL('..', import.meta.url)),
  programs: { main: 'src/main.ts', migrate: 'src/migrate.ts' },
  roles: orderRoles,
  ports: { api: 3001, relay: 3011, consumer: 3012, retention: 3013 },
  topics: topicDeclarations.filter((topic) => topic.owner === 'order-service'),
  rolesNeedKafka,
  readConfig,
  start: startOrderService,
  migrate: migrateDatabase,
});
