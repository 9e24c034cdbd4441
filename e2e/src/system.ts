import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { Stack, findFreePort, findRepoRoot } from '@outbox-inbox/infra';
import { roleArgs } from '@outbox-inbox/service-kit/role-command';

export const topics = { orders: 'order.events', payments: 'payment.events' } as const;

/** Amounts above this fail payment: the simulated gateway's deterministic rule. */
export const paymentLimit = 50_000;

export interface SystemOptions {
  readonly name: string;
  readonly orderRelays?: number;
  readonly paymentRelays?: number;
  readonly paymentConsumers?: number;
  readonly paymentProcessors?: number;
  /** Chance (0..1) that a relay SIGKILLs itself between Kafka's ack and its commit. */
  readonly relayCrashAfterPublish?: number;
  readonly partitions?: number;
}

export interface RoleProcess {
  readonly component: string;
  readonly service: 'order' | 'payment';
  readonly role: 'api' | 'relay' | 'consumer' | 'processor';
  /** Where it serves /health and /metrics. */
  readonly port: number;
}

/** The whole system under test: both services' roles as separate processes on a real stack. */
export interface System {
  readonly stack: Stack;
  readonly orderUrl: string;
  readonly paymentUrl: string;
  readonly orderDb: pg.Pool;
  readonly paymentDb: pg.Pool;
  readonly roles: readonly RoleProcess[];
  /** Stops every process and server; `keepLogs` leaves the stack's folder for a post-mortem. */
  down(options?: { keepLogs?: boolean }): Promise<void>;
}

const root = findRepoRoot();
const services = {
  order: path.join(root, 'services', 'order-service'),
  payment: path.join(root, 'services', 'payment-service'),
} as const;

function migrate(service: keyof typeof services, databaseUrl: string): void {
  execFileSync(process.execPath, [path.join(services[service], 'src', 'migrate.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Creates both topics (again, after Kafka lost its data). */
export async function createTopics(brokers: readonly string[], partitions: number): Promise<void> {
  const admin = new Kafka({
    clientId: 'e2e-setup',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: Object.values(topics).map((topic) => ({ topic, numPartitions: partitions })),
    });
  } finally {
    await admin.disconnect();
  }
}

/**
 * A pool for the suite's own reads. The suite restarts PostgreSQL under it: a lost connection,
 * idle or checked out, must not end the test process.
 */
export function resilientPool(connectionString: string): pg.Pool {
  const created = new pg.Pool({ connectionString, max: 4 });
  created.on('error', () => undefined);
  created.on('connect', (client) => client.on('error', () => undefined));
  return created;
}

/**
 * Starts PostgreSQL and Kafka, migrates both databases, creates the topics, then starts every
 * role of both services as its own process, registered in the stack so a test (or a person
 * with `pnpm stack kill <component>`) can SIGKILL exactly one of them.
 */
export async function startSystem(options: SystemOptions): Promise<System> {
  const stack = await Stack.up({
    name: options.name,
    kafkaHeapMb: 512,
    env: { ...process.env, STACK_PROVIDER: 'local' },
  });
  const orderDatabase = await stack.createDatabase('orders');
  const paymentDatabase = await stack.createDatabase('payments');
  migrate('order', orderDatabase);
  migrate('payment', paymentDatabase);
  await createTopics(stack.kafkaBrokers, options.partitions ?? 3);

  const plan: { service: 'order' | 'payment'; role: RoleProcess['role']; count: number }[] = [
    { service: 'order', role: 'api', count: 1 },
    { service: 'order', role: 'relay', count: options.orderRelays ?? 1 },
    { service: 'order', role: 'consumer', count: 1 },
    { service: 'payment', role: 'api', count: 1 },
    { service: 'payment', role: 'relay', count: options.paymentRelays ?? 1 },
    { service: 'payment', role: 'consumer', count: options.paymentConsumers ?? 1 },
    { service: 'payment', role: 'processor', count: options.paymentProcessors ?? 1 },
  ];
  const roles: RoleProcess[] = [];
  for (const { service, role, count } of plan) {
    for (let instance = 1; instance <= count; instance++) {
      const component = count === 1 ? `${service}-${role}` : `${service}-${role}-${instance}`;
      roles.push({ component, service, role, port: await findFreePort() });
    }
  }

  await Promise.all(
    roles.map((process) =>
      stack.addProcess({
        name: process.component,
        command: globalThis.process.execPath,
        args: roleArgs(path.join(services[process.service], 'src', 'main.ts'), process.role),
        cwd: services[process.service],
        env: {
          DATABASE_URL: process.service === 'order' ? orderDatabase : paymentDatabase,
          KAFKA_BROKERS: stack.kafkaBrokers.join(','),
          HOST: '127.0.0.1',
          PORT: String(process.port),
          OPS_PORT: String(process.port),
          LOG_LEVEL: 'info',
          PAYMENT_AMOUNT_LIMIT: String(paymentLimit),
          RELAY_POLL_INTERVAL_MS: '200',
          KAFKAJS_NO_PARTITIONER_WARNING: '1',
          ...(process.role === 'relay' && options.relayCrashAfterPublish
            ? { FAULT_CRASH_AFTER_PUBLISH: String(options.relayCrashAfterPublish) }
            : {}),
        },
        readiness: { type: 'http', url: `http://127.0.0.1:${process.port}/health/live` },
        // Nine Node processes start at once on two cores: give each time to load.
        readyTimeoutMs: 90_000,
        endpoints: { url: `http://127.0.0.1:${process.port}` },
      }),
    ),
  );

  const portOf = (component: string): number =>
    roles.find((r) => r.component === component)?.port ?? 0;
  const orderDb = resilientPool(orderDatabase);
  const paymentDb = resilientPool(paymentDatabase);
  return {
    stack,
    orderUrl: `http://127.0.0.1:${portOf('order-api')}`,
    paymentUrl: `http://127.0.0.1:${portOf('payment-api')}`,
    orderDb,
    paymentDb,
    roles,
    async down(options = {}) {
      await Promise.all([orderDb.end(), paymentDb.end()]);
      await stack.down({ keepFiles: options.keepLogs ?? false });
    },
  };
}
