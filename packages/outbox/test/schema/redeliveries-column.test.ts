import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import {
  createPgPool,
  migrateOutbox,
  outboxMigrations,
  silentLogger,
  type OutboxTables,
} from '../../src/index.ts';
import { OUTBOX_MIGRATION_TABLE } from '../../src/schema/migrations.ts';
import { stack } from '../support/harness.ts';

let db: Kysely<OutboxTables>;
beforeAll(async () => {
  const url = await stack().createDatabase(`redeliveries_${randomUUID().slice(0, 8)}`);
  db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool: createPgPool({ connectionString: url }, silentLogger) }),
  });
});
afterAll(async () => {
  await db.destroy();
});

it('gives the rows of an earlier version zero redeliveries on upgrade, and removes the column on down', async () => {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...outboxMigrations }) },
    migrationTableName: OUTBOX_MIGRATION_TABLE,
    migrationLockTableName: `${OUTBOX_MIGRATION_TABLE}_lock`,
  });
  expect((await migrator.migrateTo('0000-outbox-0003-consumer-poison')).error).toBeUndefined();
  // Rows written by the previous version, without the column.
  const eventId = randomUUID();
  await sql`INSERT INTO inbox_event (event_id, consumer_group, event_type, aggregate_type,
      aggregate_id, partition_key, payload, topic, kafka_partition, kafka_offset, occurred_at)
    VALUES (${eventId}, 'g', 'OrderCreated', 'order', 'o', 'o', '{}', 't', 0, 1, now())`.execute(
    db,
  );
  await sql`INSERT INTO processed_event (consumer, event_id) VALUES ('c', ${eventId})`.execute(db);

  await migrateOutbox(db);
  const inbox = await db.selectFrom('inbox_event').select('redeliveries').execute();
  const processed = await db.selectFrom('processed_event').select('redeliveries').execute();
  expect(inbox).toEqual([{ redeliveries: 0 }]);
  expect(processed).toEqual([{ redeliveries: 0 }]);

  expect((await migrator.migrateTo('0000-outbox-0003-consumer-poison')).error).toBeUndefined();
  const columns = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.columns WHERE column_name = 'redeliveries'
  `.execute(db);
  expect(columns.rows).toEqual([]);
  await migrateOutbox(db);
});
