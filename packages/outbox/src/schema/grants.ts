import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { OutboxError } from '../errors.ts';

/**
 * The library's workers whose access to its tables differs; a login may be several of them.
 * - `writer`: code that calls `enqueue`/`enqueueMany` (an api, any handler that writes events).
 * - `relay`: `startRelay`.
 * - `inbox-writer`: `startInboxWriter` (it parks what it cannot store).
 * - `inbox-processor`: `startInboxProcessor`. Its handlers' `enqueue`s are not implied: add
 *   `writer` when they enqueue (most do), so a processor that only writes its own tables
 *   cannot write events.
 * - `dedup-consumer`: `startDedupConsumer` (it parks too). Add `writer` if its effects enqueue.
 * - `retention`: `runRetention`, `runRetentionExclusively`, `startRetentionJob`,
 *   `previewRetention` (and `outbox retention`).
 * - `cdc-connector`: Debezium's login. It also needs the REPLICATION attribute, which is a
 *   role's, not a grant: the caller sets it (`ALTER ROLE ... REPLICATION`).
 * - `metrics`: a process that runs none of the workers but serves the library's metrics
 *   (`createOutboxMetrics`), such as a read-only api: the backlog gauges' reads only.
 * - `operator`: the `outbox` command's status, replay and triage of failed outbox rows, dead
 *   inbox rows and parked messages (`outbox retention` needs `retention`; `outbox cdc remove`
 *   drops a publication and a slot, which takes the tables' owner).
 */
export type OutboxWorkerKind =
  | 'writer'
  | 'relay'
  | 'inbox-writer'
  | 'inbox-processor'
  | 'dedup-consumer'
  | 'retention'
  | 'cdc-connector'
  | 'metrics'
  | 'operator';

const TABLES = ['outbox_event', 'inbox_event', 'processed_event', 'parked_message'] as const;
type OutboxTable = (typeof TABLES)[number];
const PRIVILEGES = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;
type Privilege = (typeof PRIVILEGES)[number];

/** One privilege on one table: on these columns only, or on the whole table. */
interface Access {
  readonly table: OutboxTable;
  readonly privilege: Privilege;
  readonly columns: readonly string[] | 'whole table';
}

const access = (
  table: OutboxTable,
  privilege: Privilege,
  columns: readonly string[] | 'whole table',
): Access => ({ table, privilege, columns });

// A WHERE, a RETURNING, an ON CONFLICT target and a SET's right-hand side read columns: each
// needs SELECT on them. Identity columns and column defaults need nothing of their own.

/**
 * What the backlog gauges read (ops/backlog-gauges.ts). `createOutboxMetrics(registry, db)`
 * runs them in every process that has a database (service-kit: every role), and a refused
 * query would only leave the gauges at zero, so every worker of the library gets them. The
 * parked count needs SELECT on some column of the table: `count(*)` names none.
 */
const BACKLOG_GAUGES: readonly Access[] = [
  access('outbox_event', 'SELECT', ['published_at', 'created_at', 'failed_at', 'transaction_id']),
  access('inbox_event', 'SELECT', ['processed', 'dead_at', 'received_at']),
  access('parked_message', 'SELECT', ['id']),
];

/** receive/park.ts: the raw message and the reason; no statement reads a parked row back. */
const PARKING: readonly Access[] = [
  access('parked_message', 'INSERT', [
    'consumer',
    'topic',
    'kafka_partition',
    'kafka_offset',
    'message_key',
    'message_value',
    'header_names',
    'header_values',
    'reason',
  ]),
];

/** An outbox row's event as `enqueue` writes it and the relay reads it. */
const OUTBOX_EVENT_COLUMNS = [
  'event_id',
  'event_type',
  'aggregate_type',
  'aggregate_id',
  'topic',
  'partition_key',
  'payload',
  'headers',
] as const;

/** A received event as the inbox writer stores it and the processor hands it to a handler. */
const RECEIVED_EVENT_COLUMNS = [
  'event_id',
  'event_type',
  'aggregate_type',
  'aggregate_id',
  'partition_key',
  'payload',
  'headers',
  'topic',
  'kafka_partition',
  'kafka_offset',
  'occurred_at',
] as const;

/**
 * What a row's outcome sets: the processor's marks, retries and dead rows, and the operator's
 * retry and discard of dead rows.
 */
const INBOX_OUTCOME_COLUMNS = [
  'processed',
  'processed_at',
  'attempts',
  'next_attempt_at',
  'last_error',
  'dead_at',
] as const;

/** enqueue/enqueue.ts: one INSERT without RETURNING; the writer lock and NOTIFY need nothing. */
const WRITER: readonly Access[] = [access('outbox_event', 'INSERT', OUTBOX_EVENT_COLUMNS)];

/**
 * relay/: the claim reads the event and the fence's columns and locks the rows (FOR UPDATE,
 * which a column-level UPDATE allows); the marks write the publication and refusal columns.
 */
const RELAY: readonly Access[] = [
  access('outbox_event', 'SELECT', [
    'id',
    ...OUTBOX_EVENT_COLUMNS,
    'created_at',
    'published_at',
    'transaction_id',
    'publish_attempts',
    'failed_at',
  ]),
  access('outbox_event', 'UPDATE', ['published_at', 'publish_attempts', 'last_error', 'failed_at']),
];

/** inbox-writer/: INSERT ... ON CONFLICT (event_id) DO NOTHING RETURNING event_id, repeats. */
const INBOX_WRITER: readonly Access[] = [
  access('inbox_event', 'INSERT', ['consumer_group', ...RECEIVED_EVENT_COLUMNS]),
  access('inbox_event', 'SELECT', ['event_id', 'redeliveries']),
  access('inbox_event', 'UPDATE', ['redeliveries']),
  ...PARKING,
];

/** inbox-processor/: the claim (locks, counts, returns the event), the write's lock and marks. */
const INBOX_PROCESSOR: readonly Access[] = [
  access('inbox_event', 'SELECT', [
    'seq',
    ...RECEIVED_EVENT_COLUMNS,
    'received_at',
    'processed',
    'attempts',
    'next_attempt_at',
    'last_error',
    'dead_at',
  ]),
  access('inbox_event', 'UPDATE', INBOX_OUTCOME_COLUMNS),
];

/** dedup-consumer/: INSERT ... ON CONFLICT DO NOTHING RETURNING event_id, repeats, parking. */
const DEDUP_CONSUMER: readonly Access[] = [
  access('processed_event', 'INSERT', ['consumer', 'event_id']),
  access('processed_event', 'SELECT', ['consumer', 'event_id', 'redeliveries']),
  access('processed_event', 'UPDATE', ['redeliveries']),
  ...PARKING,
];

/**
 * ops/retention.ts: DELETE ... WHERE ctid = ANY(ARRAY(SELECT ctid ... FOR UPDATE SKIP LOCKED)),
 * by the date columns of its windows (`created_at` under CDC). PostgreSQL lets a role lock
 * rows (FOR UPDATE, any strength) only with UPDATE on some column, DELETE is not enough: the
 * three tables retention skips locked rows of get UPDATE on their diagnostic text only
 * (`last_error`, `reason`), which moves nothing. `processed_event` is deleted without locks.
 */
const RETENTION: readonly Access[] = [
  access('outbox_event', 'SELECT', ['ctid', 'published_at', 'created_at']),
  access('outbox_event', 'UPDATE', ['last_error']),
  access('inbox_event', 'SELECT', ['ctid', 'processed', 'processed_at']),
  access('inbox_event', 'UPDATE', ['last_error']),
  access('processed_event', 'SELECT', ['ctid', 'processed_at']),
  access('parked_message', 'SELECT', ['ctid', 'parked_at']),
  access('parked_message', 'UPDATE', ['reason']),
  ...TABLES.map((table) => access(table, 'DELETE', 'whole table')),
];

/**
 * cdc/cdc-connector-config.ts: the snapshot is `SELECT * FROM outbox_event WHERE published_at
 * IS NULL`, and the stream carries every column. The heartbeat table is not the migrations':
 * `registerCdcRelay` creates it (and `removeCdcRelay` drops it), so it is not granted here.
 */
const CDC_CONNECTOR: readonly Access[] = [access('outbox_event', 'SELECT', 'whole table')];

/**
 * ops/status.ts, ops/replay.ts, ops/failed-events.ts, inbox-processor/dead-rows.ts and
 * receive/ (parked): reads for the tables it prints, the columns retry/skip/requeue/discard
 * set, and parked rows whole (shown raw, deleted when requeued or discarded).
 */
const OPERATOR: readonly Access[] = [
  access('outbox_event', 'SELECT', [
    'id',
    'event_id',
    'event_type',
    'topic',
    'partition_key',
    'created_at',
    'published_at',
    'publish_attempts',
    'last_error',
    'failed_at',
    'skipped_at',
  ]),
  access('outbox_event', 'UPDATE', ['published_at', 'publish_attempts', 'failed_at', 'skipped_at']),
  access('inbox_event', 'SELECT', [
    'event_id',
    'seq',
    'consumer_group',
    'event_type',
    'topic',
    'partition_key',
    'received_at',
    'processed',
    'attempts',
    'last_error',
    'dead_at',
  ]),
  access('inbox_event', 'UPDATE', INBOX_OUTCOME_COLUMNS),
  access('processed_event', 'SELECT', ['processed_at']),
  access('parked_message', 'SELECT', 'whole table'),
  access('parked_message', 'DELETE', 'whole table'),
];

const WORKER_ACCESS: Readonly<Record<OutboxWorkerKind, readonly Access[]>> = {
  writer: [...WRITER, ...BACKLOG_GAUGES],
  relay: [...RELAY, ...BACKLOG_GAUGES],
  'inbox-writer': [...INBOX_WRITER, ...BACKLOG_GAUGES],
  'inbox-processor': [...INBOX_PROCESSOR, ...BACKLOG_GAUGES],
  'dedup-consumer': [...DEDUP_CONSUMER, ...BACKLOG_GAUGES],
  retention: [...RETENTION, ...BACKLOG_GAUGES],
  // Not a process of the library: no gauges.
  'cdc-connector': CDC_CONNECTOR,
  metrics: BACKLOG_GAUGES,
  operator: [...OPERATOR, ...BACKLOG_GAUGES],
};

/** Every worker kind, in the order the type lists them. */
export const OUTBOX_WORKER_KINDS = Object.freeze(Object.keys(WORKER_ACCESS) as OutboxWorkerKind[]);

/** Options of {@link outboxGrantStatements}. */
export interface OutboxGrantOptions {
  /**
   * The schema the library's tables are in (`migrateOutbox` creates them in the connection's
   * `current_schema()`). Given, the tables are named in it and the role gets USAGE on it;
   * omitted, the tables are named as the granting session's search path finds them.
   */
  readonly schema?: string;
}

/**
 * The GRANT statements that give `role` what `workers` need of the library's tables and
 * nothing more, one statement per table and privilege, column lists where the workers use
 * only some columns. Pure: nothing is run. The role name is quoted as an identifier, so any
 * name works (`-x`, `Order Relay`); an empty one, `public` (which PostgreSQL would read as
 * every role), a reserved one and an unknown worker are refused with INVALID_OPTIONS.
 */
export function outboxGrantStatements(
  role: string,
  workers: readonly OutboxWorkerKind[],
  options: OutboxGrantOptions = {},
): string[] {
  const grantee = quotedRole(role);
  if (workers.length === 0) {
    throw new OutboxError('INVALID_OPTIONS', 'name at least one worker to grant access for');
  }
  const merged = mergedAccess(workers);
  const schema = options.schema === undefined ? undefined : pg.escapeIdentifier(options.schema);
  const tableName = (table: OutboxTable) => (schema === undefined ? table : `${schema}.${table}`);
  const statements = schema === undefined ? [] : [`GRANT USAGE ON SCHEMA ${schema} TO ${grantee}`];
  for (const table of TABLES) {
    for (const privilege of PRIVILEGES) {
      const columns = merged.get(`${table} ${privilege}`);
      if (columns === undefined) continue;
      const on = columns === 'whole table' ? '' : ` (${[...columns].join(', ')})`;
      statements.push(`GRANT ${privilege}${on} ON TABLE ${tableName(table)} TO ${grantee}`);
    }
  }
  return statements;
}

/** The workers' access by `<table> <privilege>`: the union of their columns. */
function mergedAccess(
  workers: readonly OutboxWorkerKind[],
): Map<string, Set<string> | 'whole table'> {
  const merged = new Map<string, Set<string> | 'whole table'>();
  for (const worker of workers) {
    // A JavaScript caller (or a cast) may pass any string.
    if (!Object.hasOwn(WORKER_ACCESS, worker)) {
      throw new OutboxError(
        'INVALID_OPTIONS',
        `unknown worker "${String(worker)}": one of ${OUTBOX_WORKER_KINDS.join(', ')}`,
      );
    }
    for (const { table, privilege, columns } of WORKER_ACCESS[worker]) {
      const key = `${table} ${privilege}`;
      const held = merged.get(key);
      if (held === 'whole table') continue;
      if (columns === 'whole table') merged.set(key, 'whole table');
      else merged.set(key, new Set([...(held ?? []), ...columns]));
    }
  }
  return merged;
}

/** PostgreSQL cuts identifiers to this many bytes: a longer name would grant to another role. */
const MAX_IDENTIFIER_BYTES = 63;

/** The role name as a quoted identifier; names GRANT would not take as one role are refused. */
function quotedRole(role: string): string {
  const refuse = (why: string) =>
    new OutboxError('INVALID_OPTIONS', `cannot grant outbox access to role "${role}": ${why}`);
  if (typeof role !== 'string' || role === '') throw refuse('the name is empty');
  if (Buffer.byteLength(role, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw refuse(`longer than ${MAX_IDENTIFIER_BYTES} bytes, PostgreSQL would cut it`);
  }
  if (role.includes('\0')) throw refuse('a name cannot hold a NUL');
  // GRANT reads "public", quoted or not, as PUBLIC (every role); "none" and pg_* are reserved.
  if (role.toLowerCase() === 'public') throw refuse('PostgreSQL reads it as every role');
  if (role === 'none' || role.startsWith('pg_')) throw refuse('the name is reserved');
  return pg.escapeIdentifier(role);
}

/**
 * Grants `role` (which must exist) what `workers` need of the library's tables, in the schema
 * they were created in, USAGE on it included; see {@link outboxGrantStatements}. For a fork's
 * migration, after the library's: its `up(db)` gets a transaction, and the statements run in
 * it; given a database, they run in a transaction of their own. Run it as the tables' owner
 * (GRANT USAGE on a schema it does not own only warns: PostgreSQL grants nothing there).
 */
export async function grantOutboxAccess<DB>(
  db: Kysely<DB>,
  role: string,
  workers: readonly OutboxWorkerKind[],
): Promise<void> {
  const { rows } = await sql<{ schema: string | null }>`
    SELECT current_schema() AS schema
  `.execute(db);
  const schema = rows[0]?.schema;
  if (schema == null) {
    throw new OutboxError('INVALID_OPTIONS', 'no current schema: the search path names none');
  }
  const statements = outboxGrantStatements(role, workers, { schema });
  const run = async (executor: Kysely<DB>): Promise<void> => {
    for (const statement of statements) await sql.raw(statement).execute(executor);
  };
  if (db.isTransaction) await run(db);
  else await db.transaction().execute(run);
}
