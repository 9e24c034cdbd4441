#!/usr/bin/env node
/** `node src/migrate.ts`: brings DATABASE_URL to the latest schema, then exits. */
import { createEnvReader, createLogger } from '@outbox-inbox/service-kit';
import { migrateDatabase } from './database/migrations.ts';

const logger = createLogger({ service: 'payment-service', level: 'info' });
try {
  const url = createEnvReader(process.env).url('DATABASE_URL', ['postgres', 'postgresql']);
  await migrateDatabase({ url, logger });
  logger.info('payment-service database is up to date');
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
