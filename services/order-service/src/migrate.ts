#!/usr/bin/env node
/**
 * `node src/migrate.ts`: brings DATABASE_URL to the latest schema and provisions the Kafka topics
 * this service publishes to (on KAFKA_BROKERS, when set), then exits.
 */
import { runMigrateMain } from '@outbox-inbox/service-kit';
import { orderService } from './order-service.ts';

await runMigrateMain(orderService, process.env);
