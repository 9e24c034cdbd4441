#!/usr/bin/env node
/**
 * order-service entry point: `node src/main.ts [--roles api,relay,consumer]` (or ROLES=...).
 * Reads the configuration once, starts the roles, stops gracefully on SIGTERM / SIGINT.
 */
import { runServiceMain } from '@outbox-inbox/service-kit';
import { orderService } from './order-service.ts';

await runServiceMain(orderService, { argv: process.argv.slice(2), env: process.env });
