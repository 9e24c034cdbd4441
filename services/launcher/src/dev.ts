#!/usr/bin/env node
/**
 * `pnpm dev`: PostgreSQL, Kafka, migrations and every role of both services, each role its own
 * supervised process of the `dev` stack (so `pnpm stack kill order-relay` works from another
 * shell). Stays in the foreground; Ctrl-C stops everything.
 */
import { InfraError, Stack, devPorts } from '@outbox-inbox/infra';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import { startDashboard } from './dashboard/start-dashboard.ts';
import { componentNames } from './system/role-processes.ts';
import { startServices } from './system/start-services.ts';

const name = process.env['STACK_NAME'] ?? 'dev';
const started = Date.now();
const reaped = await Stack.reapOrphans();
if (reaped.length > 0) console.log(`stopped leftovers of crashed runs: ${reaped.join(', ')}`);
console.log('starting PostgreSQL and Kafka (the first run resolves Kafka from Maven Central)…');

let stack: Stack | undefined;
try {
  stack = await Stack.up({ name, ports: devPorts() });
  console.log('migrating the databases and starting the services…');
  const running = await startServices(stack, {
    // A little simulated gateway latency, so a burst visibly queues in the payment inbox.
    settings: { PAYMENT_LATENCY_MS: process.env['PAYMENT_LATENCY_MS'] ?? '20' },
  });
  const orders = running.of(orderService);
  const payments = running.of(paymentService);
  const dashboard = await startDashboard({
    stack,
    orderApiUrl: orders.apiUrl,
    databaseUrls: [orders.databaseUrl, payments.databaseUrl],
    port: Number(process.env['DASHBOARD_PORT'] ?? 3000),
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`
The system is up (${seconds} s).

  dashboard        ${dashboard.url}    components, kill/start, live charts, orders, load

  order-service    ${orders.apiUrl}    POST /orders, POST /orders/:id/cancel, GET /orders[/:id]
  payment-service  ${payments.apiUrl}    GET /payments?orderId=, GET /payments/:id
  metrics          ${orders.apiUrl}/metrics, ${payments.apiUrl}/metrics
  PostgreSQL       ${orders.databaseUrl}
                   ${payments.databaseUrl}
  Kafka            ${stack.kafkaBrokers.join(',')}

Try it:
  curl -s -X POST ${orders.apiUrl}/orders -H 'content-type: application/json' \\
       -d '{"customerId":"c-1","amount":4200,"currency":"EUR"}'
  curl -s ${orders.apiUrl}/orders/<id>
  ./pnpm demo

Break it (from another shell):
  ./pnpm stack status
  ./pnpm stack kill kafka          ./pnpm stack start kafka
  ./pnpm stack kill order-relay    ./pnpm stack start order-relay
  ./pnpm stack logs payment-processor --follow
  components: ${componentNames.join(', ')}

Ctrl-C stops everything.`);
  // Signal listeners alone do not keep Node's event loop alive; this timer does, until a signal.
  const keepAlive = setInterval(() => undefined, 60_000);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(keepAlive);
  console.log('\nstopping…');
  await dashboard.stop();
  await stack.down();
  console.log('stopped');
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof InfraError) {
    if (error.hint) console.error(`  fix: ${error.hint}`);
    if (error.logFile) console.error(`  log: ${error.logFile}`);
  }
  await stack?.down().catch(() => undefined);
  process.exitCode = 1;
}
