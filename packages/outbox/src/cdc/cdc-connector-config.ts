/**
 * The header the event router puts an outbox row's `headers` column in, as JSON; the project's
 * transformation turns it into one Kafka header per entry (OutboxHeaders.java names it too).
 */
const OUTBOX_ROW_HEADERS = 'outbox_row_headers';

/** What the CDC relay of one service database needs to know. */
export interface CdcConnectorSpec {
  /** The connector's name in Kafka Connect, e.g. `order-service-outbox`. */
  readonly name: string;
  /** The service database whose `outbox_event` is published (a user with REPLICATION). */
  readonly databaseUrl: string;
}

/** Slot and publication names: lowercase letters, digits and `_`, at most 63 bytes. */
export function replicationName(connectorName: string): string {
  const cleaned = connectorName.toLowerCase().replaceAll(/[^a-z0-9_]/g, '_');
  return `outbox_cdc_${cleaned}`.slice(0, 63);
}

/** The topic the connector's heartbeat records go to. */
export function heartbeatTopic(connectorName: string): string {
  return `__debezium-heartbeat.${replicationName(connectorName)}`;
}

/**
 * A table the connector writes a row to on every heartbeat, in the publication beside
 * `outbox_event`. The slot can only confirm WAL positions of changes it decodes; while the outbox
 * is quiet and other tables (or other databases of the cluster) write WAL, the heartbeat row is
 * what it decodes, so it confirms the WAL up to there and PostgreSQL may recycle it.
 */
export const CDC_HEARTBEAT_TABLE = 'outbox_cdc_heartbeat';

/**
 * Debezium's PostgreSQL connector with its outbox event router, configured so that each
 * message carries what the polling relay's carries (kafka-port/event-record.ts): key =
 * `partition_key`, value = the `payload` text as PostgreSQL writes jsonb, the row's headers and
 * the standard ones (the last step, OutboxHeaders, is the project's own: infra/connect/src).
 *
 * - Its own slot, and a publication limited to the inserts of `outbox_event`: the relay's
 *   updates and retention's deletes are never decoded.
 * - The first start publishes the rows not yet published (a snapshot limited to
 *   `published_at IS NULL`), then streams from the slot: a service that switches from the
 *   polling relay stops that relay first, and a row both relays sent is a duplicate the
 *   consumers drop.
 */
export function cdcConnectorConfig(spec: CdcConnectorSpec): Record<string, string> {
  const url = new URL(spec.databaseUrl);
  const replication = replicationName(spec.name);
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
  const table = 'public.outbox_event';
  const heartbeats = `public.${CDC_HEARTBEAT_TABLE}`;
  const placement = [
    'event_id:header:event_id',
    'event_type:header:event_type',
    'aggregate_type:header:aggregate_type',
    'aggregate_id:header:aggregate_id',
    'created_at:header:occurred_at',
    `headers:header:${OUTBOX_ROW_HEADERS}`,
  ].join(',');
  return {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'plugin.name': 'pgoutput',
    'database.hostname': url.hostname,
    'database.port': url.port || '5432',
    'database.user': decodeURIComponent(url.username),
    'database.password': decodeURIComponent(url.password),
    'database.dbname': database,
    'topic.prefix': replication,
    'slot.name': replication,
    'publication.name': replication,
    'publication.autocreate.mode': 'disabled',
    'table.include.list': `${table},${heartbeats}`,
    'snapshot.mode': 'initial',
    'snapshot.select.statement.overrides': table,
    [`snapshot.select.statement.overrides.${table}`]: `SELECT * FROM ${table} WHERE published_at IS NULL ORDER BY id`,
    'tombstones.on.delete': 'false',
    'heartbeat.interval.ms': '5000',
    // Debezium hands Connect a batch when it is full or after this wait (default 500 ms), which
    // at a few events per second is the whole wait (docs/benchmarks.md, B8, measures it). The
    // polling relay is woken by NOTIFY; this is the CDC equivalent.
    'poll.interval.ms': '20',
    // One row at a time: the older ones go in the same statement (deletes are not published).
    'heartbeat.action.query': `WITH gone AS (DELETE FROM ${heartbeats}) INSERT INTO ${heartbeats} (beat_at) VALUES (now())`,
    // The heartbeat rows are decoded (that is their point) and dropped before the router.
    transforms: 'dropHeartbeats,outbox,headers',
    'transforms.dropHeartbeats.type': 'org.apache.kafka.connect.transforms.Filter',
    'transforms.dropHeartbeats.predicate': 'isHeartbeat',
    predicates: 'isHeartbeat',
    'predicates.isHeartbeat.type':
      'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
    'predicates.isHeartbeat.pattern': `.*\\.${CDC_HEARTBEAT_TABLE}`,
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': 'event_id',
    'transforms.outbox.table.field.event.key': 'partition_key',
    'transforms.outbox.table.field.event.payload': 'payload',
    'transforms.outbox.table.expand.json.payload': 'false',
    'transforms.outbox.route.by.field': 'topic',
    'transforms.outbox.route.topic.replacement': '${routedByValue}',
    'transforms.outbox.table.fields.additional.placement': placement,
    'transforms.headers.type': 'dev.outboxinbox.connect.OutboxHeaders',
  };
}
