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
import { readParkedMessages } from '../../src/ops.ts';
import { OUTBOX_MIGRATION_TABLE } from '../../src/schema/migrations.ts';
import { stack } from '../support/harness.ts';

let db: Kysely<OutboxTables>;
beforeAll(async () => {
  const url = await stack().createDatabase(`parked_${randomUUID().slice(0, 8)}`);
  db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool: createPgPool({ connectionString: url }, silentLogger) }),
  });
});
afterAll(async () => {
  await db.destroy();
});

it('moves parked headers from jsonb to bytes on upgrade, and reads them back as pairs', async () => {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...outboxMigrations }) },
    migrationTableName: OUTBOX_MIGRATION_TABLE,
    migrationLockTableName: `${OUTBOX_MIGRATION_TABLE}_lock`,
  });
  const first = await migrator.migrateTo('0000-outbox-0001-schema');
  expect(first.error).toBeUndefined();
  // A row parked by the previous version, with its headers as jsonb strings.
  await sql`INSERT INTO parked_message (consumer, topic, kafka_partition, kafka_offset,
      message_key, message_value, headers, reason)
    VALUES ('c', 't', 0, 7, 'k', 'v', '{"event_type":"X","traceparent":"00-ab"}', 'old')`.execute(
    db,
  );

  await migrateOutbox(db);
  await db
    .insertInto('parked_message')
    .values({
      consumer: 'c',
      topic: 't',
      kafka_partition: 1,
      kafka_offset: 8,
      message_key: null,
      message_value: Buffer.from([0, 0xff]),
      header_names: [Buffer.from('a'), Buffer.from('a'), Buffer.from('empty')],
      header_values: [Buffer.from([0]), Buffer.from([0xff]), null],
      reason: 'new',
    })
    .execute();

  const parked = await readParkedMessages(db, { consumer: 'c' });
  expect(parked.map(({ reason, offset, headers }) => ({ reason, offset, headers }))).toEqual([
    {
      reason: 'old',
      offset: '7',
      headers: [
        { name: 'event_type', value: Buffer.from('X') },
        { name: 'traceparent', value: Buffer.from('00-ab') },
      ],
    },
    {
      reason: 'new',
      offset: '8',
      headers: [
        { name: 'a', value: Buffer.from([0]) },
        { name: 'a', value: Buffer.from([0xff]) },
        { name: 'empty', value: null },
      ],
    },
  ]);
  expect(parked[1]?.value).toEqual(Buffer.from([0, 0xff]));
  const [firstRow] = parked;
  expect(await readParkedMessages(db, { afterId: firstRow?.id })).toHaveLength(1);
});
