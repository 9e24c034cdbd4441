import { pollUntil } from '@outbox-inbox/infra';
import { migrateService } from '@outbox-inbox/launcher';
import { silentLogger, type OutboxTables } from '@outbox-inbox/outbox';
import { ConnectApi, isConnectorRunning, removeCdcRelay } from '@outbox-inbox/outbox/cdc';
import { orderService } from '@outbox-inbox/order-service';
import type { Admin, Consumer } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import type { BenchContext } from '../../context.ts';
import { benchDb } from '../../database.ts';
import { freshTopics } from '../../kafka.ts';
import { startRole, type RoleHandle } from '../../services.ts';
import { ORDER_TOPIC, startAppendReader } from '../latency/latency-bench.ts';

export type RelayMode = 'polling' | 'cdc';
export const RELAY_MODES: readonly RelayMode[] = ['polling', 'cdc'];

/** The drain backlog's topic: both relays publish to it, one at a time. */
export const DRAIN_TOPIC = 'bench.relays.drain';

/** The CDC relay role's client id; its connector is `<client id>-outbox`, as in the services. */
const CDC_CLIENT_ID = 'bench-cdc';
const CONNECTOR = `${CDC_CLIENT_ID}-outbox`;

/**
 * One relay mode's system: its own order-service database, api and relay role, so that neither
 * relay ever sees the other's rows (a CDC slot would otherwise publish the polling run's inserts).
 */
export interface RelaySystem {
  readonly mode: RelayMode;
  readonly databaseUrl: string;
  readonly db: Kysely<OutboxTables>;
  readonly api: RoleHandle;
  /** The relay role: it publishes (polling), or registers and watches the connector (cdc). */
  readonly relay: RoleHandle;
  /** The processes whose CPU is the relay's: the role, and Kafka Connect in CDC mode. */
  publisherGroups(): Record<string, number | undefined>;
  /** The process that reads the outbox and sends: the relay role, or the Connect worker. */
  publisherPid(): number | undefined;
  /** Stops publishing while a backlog is written, without losing the relay's warm state. */
  hold(): Promise<void>;
  release(): Promise<void>;
}

/** B8's set-up: both systems side by side, the order topic's append reader, a Kafka admin. */
export interface RelayModesBench {
  readonly ctx: BenchContext;
  readonly systems: ReadonlyMap<RelayMode, RelaySystem>;
  /** When Kafka appended each order's event (LogAppendTime), by order id. */
  readonly appendedAt: ReadonlyMap<string, number>;
  readonly reader: Consumer;
  readonly admin: Admin;
}

async function orderDatabase(ctx: BenchContext, mode: RelayMode) {
  const databaseUrl = await ctx.stack.createDatabase(`bench_relays_${mode}`);
  await migrateService(orderService, databaseUrl);
  const api = await startRole(ctx.stack, {
    component: `b8-${mode}-order-api`,
    service: orderService,
    role: 'api',
    databaseUrl,
  });
  return { databaseUrl, api, db: benchDb<OutboxTables>(databaseUrl) };
}

async function startPollingSystem(ctx: BenchContext): Promise<RelaySystem> {
  const { databaseUrl, api, db } = await orderDatabase(ctx, 'polling');
  const relay = await startRole(ctx.stack, {
    component: 'b8-polling-order-relay',
    service: orderService,
    role: 'relay',
    databaseUrl,
    settings: { RELAY_BATCH_SIZE: String(ctx.settings.batchSize) },
  });
  return {
    ...{ mode: 'polling', databaseUrl, db, api, relay },
    publisherGroups: () => ({ relay: relay.pid() }),
    publisherPid: () => relay.pid(),
    // Frozen (SIGSTOP), it keeps its connections, producer and plans; NOTIFYs wait in its socket.
    hold: () => Promise.resolve(ctx.stack.pause(relay.component)),
    release: () => Promise.resolve(ctx.stack.resume(relay.component)),
  };
}

async function connectorIsRunning(api: ConnectApi): Promise<boolean> {
  const status = await api.status(CONNECTOR);
  return status !== undefined && isConnectorRunning(status);
}

async function startCdcSystem(ctx: BenchContext): Promise<RelaySystem> {
  const { databaseUrl, api, db } = await orderDatabase(ctx, 'cdc');
  const connect = new ConnectApi(ctx.stack.connectUrl);
  const relay = await startRole(ctx.stack, {
    component: 'b8-cdc-order-relay',
    service: orderService,
    role: 'relay',
    databaseUrl,
    settings: {
      RELAY_MODE: 'cdc',
      CONNECT_URL: ctx.stack.connectUrl,
      KAFKA_CLIENT_ID: CDC_CLIENT_ID,
    },
  });
  await pollUntil(async () => ((await connectorIsRunning(connect)) ? true : undefined), {
    timeoutMs: 120_000,
    description: `connector ${CONNECTOR} running`,
  });
  return {
    ...{ mode: 'cdc', databaseUrl, db, api, relay },
    publisherGroups: () => ({ relay: relay.pid(), connect: ctx.stack.pid('connect') }),
    publisherPid: () => ctx.stack.pid('connect'),
    async hold() {
      await connect.pause(CONNECTOR);
      // A task still polling would send what it read; once it says PAUSED it reads no more.
      await pollUntil(
        async () => {
          const status = await connect.status(CONNECTOR);
          const paused = status?.tasks.every((task) => task.state === 'PAUSED');
          return status?.connector.state === 'PAUSED' && status.tasks.length > 0 && paused
            ? true
            : undefined;
        },
        { timeoutMs: 60_000, description: `connector ${CONNECTOR} paused` },
      );
    },
    release: () => connect.resume(CONNECTOR),
  };
}

/** Kafka Connect beside the bench's stack, both systems, the reader; nothing published yet. */
export async function setUpRelayModes(ctx: BenchContext): Promise<RelayModesBench> {
  await ctx.stack.addServer('connect');
  await freshTopics(ctx.kafka, [
    { topic: ORDER_TOPIC, partitions: 3, logAppendTime: true },
    { topic: DRAIN_TOPIC, partitions: ctx.settings.partitions },
  ]);
  const appendedAt = new Map<string, number>();
  const reader = await startAppendReader(ctx, appendedAt);
  const systems = new Map<RelayMode, RelaySystem>([
    ['polling', await startPollingSystem(ctx)],
    ['cdc', await startCdcSystem(ctx)],
  ]);
  const admin = ctx.kafka.admin();
  await admin.connect();
  return { ctx, systems, appendedAt, reader, admin };
}

/** The system of `mode` (both exist from set-up on). */
export function systemOf(bench: RelayModesBench, mode: RelayMode): RelaySystem {
  const system = bench.systems.get(mode);
  if (system === undefined) throw new Error(`B8 has no ${mode} system`);
  return system;
}

/** Where PostgreSQL's WAL is now, in bytes from its start. */
export async function walPosition(db: Kysely<OutboxTables>): Promise<number> {
  const { rows } = await sql<{ at: string }>`
    SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS at`.execute(db);
  return Number(rows[0]?.at ?? Number.NaN);
}

/**
 * Stops the roles (the CDC role first: it would register a deleted connector again), then
 * removes the connector and its replication slot, which would otherwise hold WAL.
 */
export async function tearDownRelayModes(bench: RelayModesBench): Promise<void> {
  const { ctx } = bench;
  await bench.reader.disconnect();
  await bench.admin.disconnect();
  for (const system of bench.systems.values()) {
    await Promise.all([system.relay.stop(), system.api.stop()]);
  }
  const cdc = bench.systems.get('cdc');
  if (cdc) {
    await removeCdcRelay({
      db: cdc.db,
      connectUrl: ctx.stack.connectUrl,
      connector: { name: CONNECTOR },
      logger: silentLogger,
    });
  }
  await Promise.all([...bench.systems.values()].map((system) => system.db.destroy()));
}
