import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import { outboxDb } from '../internal/views.ts';

/** Runs statements one by one: the extended protocol kysely uses takes one statement per query. */
async function run(db: Kysely<unknown>, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** The guide's two tables, extended, and the library's two more. */
const schema0001Statements: readonly string[] = [
  `CREATE TABLE outbox_event (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        uuid NOT NULL UNIQUE,
    aggregate_type  text NOT NULL,
    aggregate_id    text NOT NULL,
    event_type      text NOT NULL,
    payload         jsonb NOT NULL,
    headers         jsonb NOT NULL DEFAULT '{}',
    topic           text NOT NULL,
    partition_key   text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    published_at    timestamptz,
    transaction_id  xid8 NOT NULL DEFAULT pg_current_xact_id()
  )`,
  // The guide's index: the relay scans only the hot set, oldest first.
  `CREATE INDEX ix_outbox_event_unpublished ON outbox_event(id) WHERE published_at IS NULL`,
  // "Is there an older unpublished row of this key?": one index probe per candidate.
  `CREATE INDEX ix_outbox_event_unpublished_key ON outbox_event(partition_key, id)
    WHERE published_at IS NULL`,
  // Retention deletes by age of publication.
  `CREATE INDEX ix_outbox_event_published_at ON outbox_event(published_at)
    WHERE published_at IS NOT NULL`,

  `CREATE TABLE inbox_event (
    event_id         uuid PRIMARY KEY,
    seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    consumer_group   text NOT NULL,
    event_type       text NOT NULL,
    aggregate_type   text NOT NULL,
    aggregate_id     text NOT NULL,
    partition_key    text NOT NULL,
    payload          jsonb NOT NULL,
    headers          jsonb NOT NULL DEFAULT '{}',
    topic            text NOT NULL,
    kafka_partition  integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    occurred_at      timestamptz NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now(),
    processed        boolean NOT NULL DEFAULT false,
    processed_at     timestamptz,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_error       text,
    dead_at          timestamptz
  )`,
  `CREATE INDEX ix_inbox_event_unprocessed ON inbox_event(received_at) WHERE NOT processed`,
  `CREATE INDEX ix_inbox_event_unprocessed_seq ON inbox_event(seq) WHERE NOT processed`,
  `CREATE INDEX ix_inbox_event_unprocessed_key ON inbox_event(partition_key, seq)
    WHERE NOT processed`,
  `CREATE INDEX ix_inbox_event_processed_at ON inbox_event(processed_at) WHERE processed`,

  `CREATE TABLE processed_event (
    consumer      text NOT NULL,
    event_id      uuid NOT NULL,
    processed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
  )`,
  `CREATE INDEX ix_processed_event_processed_at ON processed_event(processed_at)`,

  `CREATE TABLE parked_message (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    consumer         text NOT NULL,
    topic            text NOT NULL,
    kafka_partition  integer NOT NULL,
    kafka_offset     bigint NOT NULL,
    message_key      bytea,
    message_value    bytea,
    headers          jsonb NOT NULL DEFAULT '{}',
    reason           text NOT NULL,
    parked_at        timestamptz NOT NULL DEFAULT now()
  )`,
];

const schema0001: Migration = {
  async up(db) {
    await run(db, schema0001Statements);
  },
  async down(db) {
    await run(db, [
      'DROP TABLE parked_message',
      'DROP TABLE processed_event',
      'DROP TABLE inbox_event',
      'DROP TABLE outbox_event',
    ]);
  },
};

/**
 * Rows the relay sets aside: Kafka refused them (too large, invalid topic, ...) or still
 * refused them after several tries. A FAILED row (`failed_at`) stays unpublished and holds
 * back the later rows of its key until an operator retries or skips it. Adding nullable or
 * constant-default columns does not rewrite the table.
 */
const relayFailures0002: Migration = {
  async up(db) {
    await run(db, [
      `ALTER TABLE outbox_event
        ADD COLUMN publish_attempts integer NOT NULL DEFAULT 0,
        ADD COLUMN last_error text,
        ADD COLUMN failed_at timestamptz,
        ADD COLUMN skipped_at timestamptz`,
      // "Is this key held back by a FAILED row?": one probe of a tiny index per candidate.
      `CREATE INDEX ix_outbox_event_failed_key ON outbox_event(partition_key)
        WHERE failed_at IS NOT NULL AND published_at IS NULL`,
    ]);
  },
  async down(db) {
    await run(db, [
      'DROP INDEX ix_outbox_event_failed_key',
      `ALTER TABLE outbox_event
        DROP COLUMN skipped_at,
        DROP COLUMN failed_at,
        DROP COLUMN last_error,
        DROP COLUMN publish_attempts`,
    ]);
  },
};

/**
 * Consumer poison: parked headers become bytes (`header_names[i]` carries `header_values[i]`),
 * because a jsonb column cannot hold a NUL and text cannot hold bytes that are not UTF-8, so
 * parking the very messages that need it failed. Existing rows are converted; the jsonb column
 * goes, so no reader sees an empty object for a message that had headers.
 */
const consumerPoison0003: Migration = {
  async up(db) {
    await run(db, [
      `ALTER TABLE parked_message
        ADD COLUMN header_names bytea[] NOT NULL DEFAULT '{}',
        ADD COLUMN header_values bytea[] NOT NULL DEFAULT '{}'`,
      `UPDATE parked_message p
        SET header_names = h.names, header_values = h.header_values
        FROM (
          SELECT id,
            array_agg(convert_to(key, 'UTF8') ORDER BY key) AS names,
            array_agg(convert_to(value, 'UTF8') ORDER BY key) AS header_values
          FROM parked_message, jsonb_each_text(headers)
          GROUP BY id
        ) h
        WHERE p.id = h.id`,
      `ALTER TABLE parked_message DROP COLUMN headers`,
    ]);
  },
  async down(db) {
    await run(db, [
      `ALTER TABLE parked_message ADD COLUMN headers jsonb NOT NULL DEFAULT '{}'`,
      // Bytes that are not text come back escaped ('\000'): jsonb cannot hold them as they are.
      `UPDATE parked_message SET headers = (
        SELECT coalesce(jsonb_object_agg(encode(n, 'escape'), encode(v, 'escape')), '{}')
        FROM unnest(header_names, header_values) AS h(n, v))`,
      `ALTER TABLE parked_message DROP COLUMN header_names, DROP COLUMN header_values`,
    ]);
  },
};

/**
 * Repeats absorbed: how many times the event arrived again after its row existed (the inbox
 * writer's conflict clause, or the dedup consumer finding its `processed_event` row). Only a
 * repeat writes it, so the common path pays nothing. A constant default does not rewrite the
 * table.
 */
const redeliveries0004: Migration = {
  async up(db) {
    await run(db, [
      `ALTER TABLE inbox_event ADD COLUMN redeliveries integer NOT NULL DEFAULT 0`,
      `ALTER TABLE processed_event ADD COLUMN redeliveries integer NOT NULL DEFAULT 0`,
    ]);
  },
  async down(db) {
    await run(db, [
      'ALTER TABLE processed_event DROP COLUMN redeliveries',
      'ALTER TABLE inbox_event DROP COLUMN redeliveries',
    ]);
  },
};

/**
 * Index diet: every index of `inbox_event` is paid at each insert and at each update that is
 * not HOT, so each must serve a query. Two did not:
 * - the UNIQUE on `seq` (an identity: its values are unique as generated, and no query looks
 *   rows up or orders processed rows by it);
 * - `(seq) WHERE NOT processed`: the processor's claim walks the unprocessed rows through the
 *   guide's `(received_at) WHERE NOT processed` instead (the same plan, one index fewer), and
 *   per-key order stays on `(partition_key, seq) WHERE NOT processed`.
 * Dropping them takes a short exclusive lock on the table; no data is rewritten.
 */
const inboxIndexDiet0005: Migration = {
  async up(db) {
    await run(db, [
      'ALTER TABLE inbox_event DROP CONSTRAINT inbox_event_seq_key',
      'DROP INDEX ix_inbox_event_unprocessed_seq',
    ]);
  },
  async down(db) {
    await run(db, [
      'CREATE INDEX ix_inbox_event_unprocessed_seq ON inbox_event(seq) WHERE NOT processed',
      'ALTER TABLE inbox_event ADD CONSTRAINT inbox_event_seq_key UNIQUE (seq)',
    ]);
  },
};

/**
 * The library's migrations, for a service that merges them into its own Migrator. The names
 * start with `0000-outbox-` so they sort before a service's own (dated or numbered) ones.
 */
export const outboxMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  '0000-outbox-0001-schema': schema0001,
  '0000-outbox-0002-relay-failures': relayFailures0002,
  '0000-outbox-0003-consumer-poison': consumerPoison0003,
  '0000-outbox-0004-redeliveries': redeliveries0004,
  '0000-outbox-0005-inbox-index-diet': inboxIndexDiet0005,
});

/** Name of the table in which `migrateOutbox` records the library's migrations. */
export const OUTBOX_MIGRATION_TABLE = 'outbox_migration';

/**
 * Runs only the library's migrations, tracked in their own table (`outbox_migration`) so they
 * never interleave with the service's migration history. Throws when a migration fails.
 */
export async function migrateOutbox<DB>(db: Kysely<DB>): Promise<void> {
  const migrator = new Migrator({
    db: outboxDb(db),
    provider: { getMigrations: async () => ({ ...outboxMigrations }) },
    migrationTableName: OUTBOX_MIGRATION_TABLE,
    migrationLockTableName: `${OUTBOX_MIGRATION_TABLE}_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`outbox migration ${failed ?? '(unknown)'} failed`, { cause: error });
  }
}
