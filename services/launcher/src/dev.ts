#!/usr/bin/env node
/**
 * `pnpm dev`: PostgreSQL, Kafka, migrations and every role of both services, each role its own
 * supervised process of the `dev` stack (so `pnpm stack kill order-relay` works from another
 * shell). Stays in the foreground; Ctrl-C stops everything.
 *
 * `pnpm dev --logs [role…]`: then follows the roles' logs, readable, all of them or the roles
 * named (`order-relay`, or `payment` for every payment role).
 *
 * `RELAY_MODE=cdc pnpm dev`: Kafka Connect with Debezium publishes the outboxes instead of the
 * polling relays; the relay roles register the connectors and report their slots' lag.
 */
import { parseArgs } from 'node:util';
import { InfraError, Stack, devPorts, untilStopSignal } from '@outbox-inbox/infra';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import { startDashboard } from './dashboard/start-dashboard.ts';
import { followRoleLogs, selectRoles } from './logs/follow-role-logs.ts';
import { componentNames } from './system/role-processes.ts';
import { startServices } from './system/start-services.ts';

const { values: flags, positionals: logRoles } = parseArgs({
  options: { logs: { type: 'boolean', default: false } },
  allowPositionals: true,
});
if (logRoles.length > 0 && !flags.logs) {
  console.error(`error: unexpected ${logRoles.join(' ')}; usage: pnpm dev [--logs [role…]]`);
  process.exit(1);
}
// A misspelt role fails now, not after the minute the system takes to start.
const logComponents = flags.logs ? rolesOrExit(logRoles) : [];

function rolesOrExit(names: readonly string[]): string[] {
  try {
    return selectRoles(componentNames, names);
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

const name = process.env['STACK_NAME'] ?? 'dev';
const relayMode = process.env['RELAY_MODE'] ?? 'polling';
if (relayMode !== 'polling' && relayMode !== 'cdc') {
  console.error(`error: RELAY_MODE must be polling or cdc (got "${relayMode}")`);
  process.exit(1);
}
const started = Date.now();
const reaped = await Stack.reapOrphans();
if (reaped.length > 0) console.log(`stopped leftovers of crashed runs: ${reaped.join(', ')}`);
console.log(
  relayMode === 'cdc'
    ? 'starting PostgreSQL, Kafka and Kafka Connect (the first run resolves their jars from Maven Central)…'
    : 'starting PostgreSQL and Kafka (the first run resolves Kafka from Maven Central)…',
);

let stack: Stack | undefined;
try {
  stack = await Stack.up({
    name,
    ports: devPorts(),
    servers: relayMode === 'cdc' ? ['postgres', 'kafka', 'connect'] : ['postgres', 'kafka'],
  });
  console.log('migrating the databases and starting the services…');
  const running = await startServices(stack, {
    settings: {
      // A little simulated gateway latency, so a burst visibly queues in the payment inbox.
      PAYMENT_LATENCY_MS: process.env['PAYMENT_LATENCY_MS'] ?? '20',
      RELAY_MODE: relayMode,
      ...(relayMode === 'cdc' ? { CONNECT_URL: stack.connectUrl } : {}),
    },
  });
  const orders = running.of(orderService);
  const payments = running.of(paymentService);
  const dashboard = await startDashboard({
    stack,
    orderApiUrl: orders.apiUrl,
    databaseUrls: [orders.databaseUrl, payments.databaseUrl],
    relayMode,
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
  Kafka            ${stack.kafkaBrokers.join(',')}${relayMode === 'cdc' ? `\n  Kafka Connect    ${stack.connectUrl}/connectors    (RELAY_MODE=cdc: Debezium publishes the outboxes)` : ''}

Try it:
  curl -s -X POST ${orders.apiUrl}/orders -H 'content-type: application/json' \\
       -d '{"customerId":"c-1","amount":4200,"currency":"EUR"}'
  curl -s ${orders.apiUrl}/orders/<id>
  ./pnpm demo

Break it (from another shell):
  ./pnpm stack status
  ./pnpm stack kill kafka          ./pnpm stack start kafka
  ./pnpm stack kill order-relay    ./pnpm stack start order-relay
  ./pnpm logs payment-processor    (readable, follows; ./pnpm logs for every role)
  components: ${componentNames.join(', ')}

Ctrl-C stops everything.`);
  if (flags.logs) console.log(`\nlogs of ${logComponents.join(', ')}:\n`);
  const logs = flags.logs
    ? followRoleLogs({
        stack,
        only: logRoles,
        from: 'start',
        colorize: process.stdout.isTTY,
        write: (text) => process.stdout.write(text),
      })
    : undefined;
  await untilStopSignal();
  logs?.stop();
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
