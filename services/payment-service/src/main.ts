#!/usr/bin/env node
/**
 * payment-service entry point: `node src/main.ts [--roles api,relay,consumer,processor]` (or ROLES=...).
 * Reads the configuration once, starts the roles, stops gracefully on SIGTERM / SIGINT.
 */
import { runServiceMain } from '@outbox-inbox/service-kit';
import { paymentService } from './payment-service.ts';

await runServiceMain(paymentService, { argv: process.argv.slice(2), env: process.env });
