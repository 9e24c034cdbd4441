#!/usr/bin/env node
/**
 * order-service entry point: `node src/main.ts [--roles api,relay,consumer]` (or ROLES=...).
 * Reads the configuration once, starts the roles, stops gracefully on SIGTERM / SIGINT.
 */
import { createLogger, parseRoles, runUntilSignal } from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';
import { parseConfig } from './config.ts';
import { orderRoles, rolesNeedKafka, startOrderService } from './roles.ts';

let logger: Logger | undefined;
await runUntilSignal(
  async () => {
    const roles = parseRoles(process.argv.slice(2), process.env, orderRoles);
    const config = parseConfig(process.env, { needsKafka: rolesNeedKafka(roles) });
    logger = createLogger({ service: 'order-service', level: config.logLevel });
    return startOrderService({ config, roles, logger });
  },
  { logger: () => logger },
);
