#!/usr/bin/env node
/**
 * payment-service entry point: `node src/main.ts [--roles api,relay,consumer,processor]` (or ROLES=...).
 * Reads the configuration once, starts the roles, stops gracefully on SIGTERM / SIGINT.
 */
import { createLogger, parseRoles, runUntilSignal } from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';
import { parseConfig } from './config.ts';
import { paymentRoles, rolesNeedKafka, startPaymentService } from './roles.ts';

let logger: Logger | undefined;
await runUntilSignal(
  async () => {
    const roles = parseRoles(process.argv.slice(2), process.env, paymentRoles);
    const config = parseConfig(process.env, { needsKafka: rolesNeedKafka(roles) });
    logger = createLogger({ service: 'payment-service', level: config.logLevel });
    return startPaymentService({ config, roles, logger });
  },
  { logger: () => logger },
);
