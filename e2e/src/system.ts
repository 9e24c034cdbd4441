import path from 'node:path';
import { topicDeclarations } from '@outbox-inbox/contracts';
import { Stack, findFreePort, stacksHome, urlAsLogin } from '@outbox-inbox/infra';
import {
  migrateService,
  roleComponent,
  roleProcesses,
  services,
  type RoleProcess,
} from '@outbox-inbox/launcher';
import { orderService } from '@outbox-inbox/order-service';
import { paymentService } from '@outbox-inbox/payment-service';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { createLogger, provisionTopics } from '@outbox-inbox/service-kit';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { faultCommand } from './faults/fault-command.ts';
import {
  emptySharedKafka,
  sharedDatabaseName,
  sharedServers,
  stackOnSharedServers,
} from './shared-servers.ts';
import type { FaultPlan } from './faults/fault-plan.ts';

/** Amounts above this fail payment: the simulated gateway's deterministic rule. */
export const paymentLimit = 50_000;

const HOUR_SECONDS = '3600';

/**
 * The retention role runs in every scenario, every second. The tables the invariants read
 * (outbox, inbox, processed_event, parked) keep their rows longer than any scenario lasts:
 * scenario 5 replays the whole outbox after Kafka lost it and the consumers must still drop
 * the replayed events as duplicates, which is exactly what those windows are for; shorter
 * ones would make the suite report the loss and the double effects they cause. Idempotency
 * keys go after a minute, well past the load generator's retries, so keys are deleted while
 * orders flow. What retention may never delete is tested row by row in packages/outbox.
 */
export const retentionSettings: Readonly<Record<string, string>> = Object.freeze({
  RETENTION_INTERVAL_SECONDS: '1',
  RETENTION_OUTBOX_WINDOW_SECONDS: HOUR_SECONDS,
  RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: HOUR_SECONDS,
  RETENTION_INBOX_WINDOW_SECONDS: HOUR_SECONDS,
  RETENTION_PARKED_WINDOW_SECONDS: HOUR_SECONDS,
  RETENTION_IDEMPOTENCY_KEY_WINDOW_SECONDS: '60',
  RETENTION_BATCH_SIZE: '100',
});

export interface SystemOptions {
  readonly name: string;
  /** Processes per role, by component (`{ 'order-relay': 2 }`); one for the others. */
  readonly instances?: Readonly<Record<string, number>>;
  /** Kill points armed in every process of their role, with the chance per unit of work. */
  readonly faults?: FaultPlan;
  /** Service settings for every role process (`{ WORKER_STALL_AFTER_MS: '2000' }`). */
  readonly settings?: Readonly<Record<string, string>>;
  /** Settings for the role processes of one service, by service name, over `settings`. */
  readonly serviceSettings?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Kafka nodes: one (`kafka`) unless given; three for the cluster scenarios (`kafka-1` …). */
  readonly kafkaBrokers?: number;
  /**
   * Who publishes the outboxes: the services' relay roles (`polling`, the default), or Debezium
   * on Kafka Connect (`cdc`: the stack runs Connect, the relay roles register and watch it).
   */
  readonly relayMode?: RelayMode;
  /**
   * Why the scenario needs a PostgreSQL and a Kafka of its own (it kills, freezes, wipes or
   * restarts one, or needs a cluster or Kafka Connect). Without a reason it runs on the suite's
   * shared servers, with databases of its own, and leaves Kafka empty when it ends.
   */
  readonly ownServers?: string;
  /**
   * `pgbouncer`: the stack runs PgBouncer in transaction mode in front of PostgreSQL, and every
   * role connects through it, set as the runbook says for such a pooler (`poolerSettings`).
   * The suite's own reads and the migrations go to PostgreSQL directly.
   */
  readonly pooler?: 'pgbouncer';
}

export type RelayMode = 'polling' | 'cdc';

/** A role process of the system under test, and where it serves /health and /metrics. */
export interface SystemProcess extends RoleProcess {
  readonly port: number;
}

/** The whole system under test: both services' roles as separate processes on a real stack. */
export interface System {
  readonly stack: Stack;
  readonly orderUrl: string;
  readonly paymentUrl: string;
  readonly orderDb: pg.Pool;
  readonly paymentDb: pg.Pool;
  readonly roles: readonly SystemProcess[];
  readonly relayMode: RelayMode;
  /** Where role processes record the deaths they inject (see faults/fault-hooks.ts). */
  readonly faultLog: string;
  /** On the suite's shared servers: the scenario may break its roles, never a server. */
  readonly onSharedServers: boolean;
  /** Where the start's seconds went: `servers 5.1, databases 1.9, roles 6.8`. */
  readonly startedIn: string;
  /** Stops every process and server; `keepLogs` leaves the stack's folder for a post-mortem. */
  down(options?: { keepLogs?: boolean }): Promise<void>;
}

/**
 * Provisions every topic as the contracts declare it, the way each service's migrate does (again,
 * after Kafka lost its data); returns the topics it had to create.
 */
export async function provisionSystemTopics(brokers: readonly string[]): Promise<string[]> {
  const admin = kafkajsClient(
    new Kafka({ clientId: 'e2e-setup', brokers: [...brokers], logLevel: logLevel.NOTHING }),
  ).createAdmin();
  await admin.connect();
  try {
    const logger = createLogger({ service: 'e2e-setup', level: 'warn' });
    const { created } = await provisionTopics(admin, topicDeclarations, { logger });
    return [...created];
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
 * What a role needs behind a pooler in transaction mode, whose server connection is the role's
 * for one transaction only: nothing prepared (PgBouncer 1.18 does not carry a prepared
 * statement to the next transaction's connection), and its LISTEN on a session of its own,
 * straight to PostgreSQL (`sessionUrl`), where the pooler would let it hear nothing.
 */
function poolerSettings(sessionUrl: string): Record<string, string> {
  return { DATABASE_PREPARE_STATEMENTS: 'false', DATABASE_SESSION_URL: sessionUrl };
}

/** The same database through the stack's PgBouncer. */
function pooledUrl(stack: Stack, directUrl: string): string {
  return stack.pooledPostgresUrl(decodeURIComponent(new URL(directUrl).pathname.slice(1)));
}

/** Each service's database, created and migrated, and its topics provisioned: by service name. */
async function createDatabases(
  stack: Stack,
  databaseName: (database: string) => string,
): Promise<Record<string, string>> {
  // Side by side: each service migrates its own database and provisions the topics it
  // publishes to, in a Node process of its own (a second or more each on a busy machine).
  const migrated = await Promise.all(
    services.map(async (service) => {
      const url = await stack.createDatabase(databaseName(service.database));
      await migrateService(service, url, stack.kafkaBrokers);
      return [service.name, url] as const;
    }),
  );
  return Object.fromEntries(migrated);
}

/**
 * The URL a role connects with: its own login (`payment-processor`), which the migrate step
 * created with exactly the role's declared access, so every scenario's faults meet the roles
 * under least privilege. A CDC relay keeps the owner's: it creates its publication and
 * heartbeat table. (Behind PgBouncer every role goes through the pooler as the owner: its user
 * list names the owner only.)
 */
function roleUrl(process: RoleProcess, ownerUrl: string, cdc: boolean): string {
  const login = process.service.logins[process.role];
  if (login === undefined || (cdc && process.role === 'relay')) return ownerUrl;
  return urlAsLogin(ownerUrl, login);
}

function databaseOf(urls: Readonly<Record<string, string>>, service: string): string {
  const url = urls[service];
  if (url === undefined) throw new Error(`no database was created for ${service}`);
  return url;
}

/** Adds every role process to the stack, each on a free port, and waits until all answer. */
async function startRoles(
  stack: Stack,
  options: SystemOptions & { databaseUrls: Record<string, string>; faultLog: string },
): Promise<SystemProcess[]> {
  const cdc = options.relayMode === 'cdc';
  const roles: SystemProcess[] = [];
  for (const process of roleProcesses(options.instances)) {
    roles.push({ ...process, port: await findFreePort() });
  }
  await Promise.all(
    roles.map((process) => {
      const directUrl = databaseOf(options.databaseUrls, process.service.name);
      const pooled = options.pooler === 'pgbouncer';
      return stack.addProcess(
        roleComponent(process, {
          port: process.port,
          databaseUrl: pooled ? pooledUrl(stack, directUrl) : roleUrl(process, directUrl, cdc),
          kafkaBrokers: stack.kafkaBrokers,
          settings: {
            PAYMENT_AMOUNT_LIMIT: String(paymentLimit),
            RELAY_POLL_INTERVAL_MS: '200',
            ...retentionSettings,
            ...(cdc ? { RELAY_MODE: 'cdc', CONNECT_URL: stack.connectUrl } : {}),
            ...(pooled ? poolerSettings(directUrl) : {}),
            ...options.settings,
            ...options.serviceSettings?.[process.service.name],
          },
          command: faultCommand(process, options.faults ?? {}, options.faultLog),
          readiness: 'live',
          // Eleven Node processes start at once on two cores: give each time to load.
          readyTimeoutMs: 90_000,
        }),
      );
    }),
  );
  return roles;
}

/**
 * Starts PostgreSQL and Kafka (and Kafka Connect in CDC mode), migrates both databases and provisions the topics, then starts
 * every role of both services as its own process, registered in the stack so a test (or a person
 * with `pnpm stack kill <component>`) can SIGKILL exactly one of them.
 */
export async function startSystem(options: SystemOptions): Promise<System> {
  const relayMode = options.relayMode ?? 'polling';
  if (options.ownServers === undefined && (relayMode === 'cdc' || (options.kafkaBrokers ?? 1) > 1))
    throw new Error(
      `${options.name}: a cluster or Kafka Connect is a server of its own; say why in ownServers`,
    );
  const shared = options.ownServers === undefined ? sharedServers() : undefined;
  let lapStart = performance.now();
  const laps: string[] = [];
  const lap = (phase: string) => {
    laps.push(`${phase} ${((performance.now() - lapStart) / 1000).toFixed(1)}`);
    lapStart = performance.now();
  };
  const stack = shared
    ? await stackOnSharedServers(options.name, shared)
    : await stackWithOwnServers(options.name, options.kafkaBrokers ?? 1, relayMode);
  lap(shared ? 'shared servers' : 'servers');
  const databaseUrls = await createDatabases(stack, shared ? sharedDatabaseName : (name) => name);
  lap('databases');
  if (options.pooler === 'pgbouncer') {
    await stack.addPgBouncer();
    lap('pgbouncer');
  }
  const faultLog = path.join(stacksHome(), stack.name, 'injected-faults.jsonl');
  const roles = await startRoles(stack, { ...options, databaseUrls, faultLog });
  lap('roles');

  const portOf = (name: string): number => roles.find((r) => r.name === name)?.port ?? 0;
  const orderDb = resilientPool(databaseOf(databaseUrls, orderService.name));
  const paymentDb = resilientPool(databaseOf(databaseUrls, paymentService.name));
  return {
    stack,
    orderUrl: `http://127.0.0.1:${portOf('order-api')}`,
    paymentUrl: `http://127.0.0.1:${portOf('payment-api')}`,
    orderDb,
    paymentDb,
    roles,
    relayMode,
    faultLog,
    onSharedServers: shared !== undefined,
    startedIn: laps.join(', '),
    async down(options = {}) {
      await Promise.all([orderDb.end(), paymentDb.end()]);
      const brokers = stack.kafkaBrokers;
      await stack.down({ keepFiles: options.keepLogs ?? false });
      if (shared) await emptySharedKafka(brokers);
    },
  };
}

/** PostgreSQL and Kafka (and Kafka Connect in CDC mode) for one scenario alone. */
function stackWithOwnServers(
  name: string,
  kafkaBrokers: number,
  relayMode: RelayMode,
): Promise<Stack> {
  return Stack.up({
    name,
    kafkaBrokers,
    servers: relayMode === 'cdc' ? ['postgres', 'kafka', 'connect'] : ['postgres', 'kafka'],
    // A cluster's nodes keep the stack's smaller default heap each.
    ...(kafkaBrokers === 1 ? { kafkaHeapMb: 512 } : {}),
    env: { ...process.env, STACK_PROVIDER: 'local' },
  });
}
