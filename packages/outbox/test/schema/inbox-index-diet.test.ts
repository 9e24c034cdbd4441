import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import {
  createPgPool,
  migrateOutbox,
  outboxMigrations,
  silentLogger,
  type OutboxTables,
} from '../../src/index.ts';
import { OUTBOX_MIGRATION_TABLE } from '../../src/schema/migrations.ts';
import { claimInboxRows } from '../../src/inbox-processor/claim-inbox-rows.ts';
import { stack } from '../support/harness.ts';
import { insertInboxBacklog } from '../support/inbox-backlog.ts';

let db: Kysely<OutboxTables>;
let url: string;
beforeAll(async () => {
  url = await stack().createDatabase(`index_diet_${randomUUID().slice(0, 8)}`);
  db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool: createPgPool({ connectionString: url }, silentLogger) }),
  });
});
afterAll(async () => {
  await db.destroy();
});

async function inboxIndexes(): Promise<string[]> {
  const result = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes WHERE tablename = 'inbox_event' ORDER BY indexname
  `.execute(db);
  return result.rows.map((row) => row.indexname);
}

const KEPT = [
  'inbox_event_pkey',
  'ix_inbox_event_processed_at',
  'ix_inbox_event_unprocessed',
  'ix_inbox_event_unprocessed_key',
];

it('leaves inbox_event the four indexes its queries use, and restores the two others on down', async () => {
  await migrateOutbox(db);
  expect(await inboxIndexes()).toEqual(KEPT);

  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...outboxMigrations }) },
    migrationTableName: OUTBOX_MIGRATION_TABLE,
    migrationLockTableName: `${OUTBOX_MIGRATION_TABLE}_lock`,
  });
  expect((await migrator.migrateTo('0000-outbox-0004-redeliveries')).error).toBeUndefined();
  expect(await inboxIndexes()).toEqual(
    [...KEPT, 'inbox_event_seq_key', 'ix_inbox_event_unprocessed_seq'].sort(),
  );

  await migrateOutbox(db);
  expect(await inboxIndexes()).toEqual(KEPT);
});

it("claims through the guide's index of unprocessed rows, probing each key's older rows", async () => {
  await migrateOutbox(db);
  await insertInboxBacklog(db);
  await sql`ANALYZE inbox_event`.execute(db);

  // One connection, on which auto_explain sends the plan of the claim itself back as a notice.
  const plans: string[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
  const explained = new Kysely<OutboxTables>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`LOAD 'auto_explain'`.execute(explained);
    await sql`SET auto_explain.log_min_duration = 0`.execute(explained);
    await sql`SET auto_explain.log_level = notice`.execute(explained);
    const { rows } = await claimInboxRows(explained, {
      limit: 16,
      maxAttempts: 5,
      leaseMs: 30_000,
    });
    expect(rows).toHaveLength(16);
  } finally {
    await explained.destroy();
  }
  const plan = plans.find((text) => text.includes('inbox_event')) ?? '(no plan)';
  expect(plan).toContain('Index Scan using ix_inbox_event_unprocessed on inbox_event i');
  expect(plan).toContain('Index Scan using ix_inbox_event_unprocessed_key on inbox_event older');
  expect(plan).not.toContain('Seq Scan');
});
