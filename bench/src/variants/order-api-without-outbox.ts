#!/usr/bin/env node
/**
 * B4's variant api process: order-service configured and run exactly as its main program does
 * (`--roles api`), with `POST /orders` writing no outbox row. Benchmark only.
 */
import { runServiceMain } from '@outbox-inbox/service-kit';
import { orderServiceWithoutOutbox } from './order-service-without-outbox.ts';

await runServiceMain(orderServiceWithoutOutbox, {
  argv: process.argv.slice(2),
  env: process.env,
});
