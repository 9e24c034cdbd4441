import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxDb } from '../internal/views.ts';
import type { KafkaClient } from '../kafka-port/kafka-client.ts';
import type { Logger } from '../logger.ts';
import type { OutboxTables } from '../schema/tables.ts';
import {
  CDC_HEARTBEAT_TABLE,
  cdcConnectorConfig,
  heartbeatTopic,
  replicationName,
  type CdcConnectorSpec,
} from './cdc-connector-config.ts';
import {
  ConnectApi,
  connectorFailure,
  isConnectorRunning,
  type ConnectorStatus,
} from './connect-api.ts';

export interface CdcRelayDeps<DB extends OutboxTables> {
  /** The service database (the publication is created there). */
  readonly db: Kysely<DB>;
  /** Kafka Connect's REST API, e.g. http://127.0.0.1:8083. */
  readonly connectUrl: string;
  /** Creates the connector's heartbeat topic. */
  readonly kafka: KafkaClient;
  readonly connector: CdcConnectorSpec;
  readonly logger: Logger;
}

const DEFAULT_RUNNING_TIMEOUT_MS = 60_000;

/**
 * The CDC relay of one service database, instead of the polling one: creates the publication
 * (inserts of `outbox_event` and of the heartbeat table only) and the connector's heartbeat topic, registers or updates the
 * Debezium connector, and waits until its task runs. Kafka Connect runs it from then on, also
 * after restarts; calling this again changes nothing that is already so.
 */
export async function registerCdcRelay<DB extends OutboxTables>(
  deps: CdcRelayDeps<DB>,
  options: { readonly timeoutMs?: number } = {},
): Promise<void> {
  await configureCdcRelay(deps);
  const api = new ConnectApi(deps.connectUrl);
  const name = deps.connector.name;
  const timeoutMs = options.timeoutMs ?? DEFAULT_RUNNING_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let status: ConnectorStatus | undefined;
  while (Date.now() < deadline) {
    status = await api.status(name);
    const failed = status && connectorFailure(status);
    if (failed !== undefined) {
      throw new OutboxError('CDC_CONNECT_FAILED', `CDC connector ${name} failed: ${failed}`);
    }
    if (status && isConnectorRunning(status)) {
      deps.logger.info({ component: 'cdc-relay', connector: name }, 'CDC connector running');
      return;
    }
    await sleep(250);
  }
  throw new OutboxError(
    'CDC_CONNECT_FAILED',
    `CDC connector ${name} is not running after ${timeoutMs} ms (last status: ${JSON.stringify(status)})`,
  );
}

/** What registerCdcRelay does before it waits: publication, heartbeat topic, connector config. */
export async function configureCdcRelay<DB extends OutboxTables>(
  deps: CdcRelayDeps<DB>,
): Promise<void> {
  const replication = replicationName(deps.connector.name);
  await ensurePublication(outboxDb(deps.db), replication);
  await ensureTopic(deps.kafka, heartbeatTopic(deps.connector.name));
  await new ConnectApi(deps.connectUrl).putConfig(
    deps.connector.name,
    cdcConnectorConfig(deps.connector),
  );
}

/**
 * Removes the CDC relay of a service database: the connector and the offsets Kafka Connect keeps
 * for it, then its replication slot (a slot nobody reads keeps the WAL from being recycled,
 * without bound), its publication and its heartbeat table. Registered again later, the
 * connector starts afresh: a snapshot of the rows not marked published, then a new slot.
 */
export async function removeCdcRelay<DB extends OutboxTables>(
  deps: Pick<CdcRelayDeps<DB>, 'db' | 'connectUrl' | 'logger'> & {
    readonly connector: Pick<CdcConnectorSpec, 'name'>;
  },
  options: { readonly timeoutMs?: number } = {},
): Promise<void> {
  const db = outboxDb(deps.db);
  const replication = replicationName(deps.connector.name);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  await removeConnector(new ConnectApi(deps.connectUrl), deps.connector.name, deadline);
  // The task lets go of the slot as it stops; after the deadline its session is ended.
  for (;;) {
    const { rows } = await sql<{ active_pid: number | null }>`
      SELECT active_pid FROM pg_replication_slots WHERE slot_name = ${replication}
    `.execute(db);
    const slot = rows[0];
    if (slot === undefined) break;
    if (slot.active_pid === null) {
      await sql`SELECT pg_drop_replication_slot(${replication})`.execute(db);
      break;
    }
    if (Date.now() >= deadline) {
      await sql`SELECT pg_terminate_backend(${slot.active_pid})`.execute(db);
    }
    await sleep(250);
  }
  await sql`DROP PUBLICATION IF EXISTS ${sql.id(replication)}`.execute(db);
  await sql`DROP TABLE IF EXISTS ${sql.id(CDC_HEARTBEAT_TABLE)}`.execute(db);
  deps.logger.info(
    { component: 'cdc-relay', connector: deps.connector.name },
    'CDC connector, its offsets, slot and publication removed',
  );
}

/**
 * Deletes the connector and its offsets. Offsets outlive a deleted connector, and Debezium
 * registered again under the same name would resume from them, find their slot gone and fail
 * its task; they can only be deleted while the connector exists, stopped, with no tasks.
 */
async function removeConnector(api: ConnectApi, name: string, deadline: number): Promise<void> {
  if ((await api.status(name)) === undefined) return;
  await api.stop(name);
  for (;;) {
    const status = await api.status(name);
    if (status === undefined) return;
    if (status.connector.state === 'STOPPED' && status.tasks.length === 0) break;
    if (Date.now() >= deadline) {
      throw new OutboxError(
        'CDC_CONNECT_FAILED',
        `CDC connector ${name} did not stop (last status: ${JSON.stringify(status)})`,
      );
    }
    await sleep(250);
  }
  await api.deleteOffsets(name);
  await api.remove(name);
}

/**
 * Our brokers create no topic on first use, and Connect would create any topic a connector
 * writes to (a mistyped event topic too): the one topic the connector needs besides the events'
 * is made here, with the broker's default replication.
 */
async function ensureTopic(kafka: KafkaClient, topic: string): Promise<void> {
  const admin = kafka.createAdmin();
  await admin.connect();
  try {
    await admin.createTopics([{ topic, partitions: 1 }]);
  } finally {
    await admin.disconnect();
  }
}

async function ensurePublication(db: Kysely<OutboxTables>, publication: string): Promise<void> {
  await sql`
    CREATE TABLE IF NOT EXISTS ${sql.id(CDC_HEARTBEAT_TABLE)} (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      beat_at timestamptz NOT NULL
    )
  `.execute(db);
  const { rows } = await sql<{ exists: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = ${publication}) AS exists
  `.execute(db);
  if (rows[0]?.exists) return;
  try {
    await sql`
      CREATE PUBLICATION ${sql.id(publication)}
        FOR TABLE outbox_event, ${sql.id(CDC_HEARTBEAT_TABLE)} WITH (publish = 'insert')
    `.execute(db);
  } catch (error) {
    // Another instance of the service created it at the same moment.
    if ((error as { code?: unknown }).code !== '42710') throw error;
  }
}
