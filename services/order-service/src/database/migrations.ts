import { sql, type Kysely } from 'kysely';
import { Migrator, type Migration } from 'kysely/migration';
import { migrateOutbox } from '@outbox-inbox/outbox';
import { createDatabase } from '@outbox-inbox/service-kit';
import type { Logger } from 'pino';

const orders0001: Migration = {
  async up(db) {
    await sql`CREATE TABLE orders (
      id              uuid PRIMARY KEY,
      seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      customer_id     text NOT NULL,
      amount          bigint NOT NULL CHECK (amount > 0),
      currency        char(3) NOT NULL,
      status          text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'PAYMENT_FAILED', 'CANCELLED')),
      payment_status  text CHECK (payment_status IN ('PAID', 'FAILED', 'REFUNDED')),
      payment_id      uuid,
      failure_reason  text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
    // GET /orders?status=… pages newest first within a status.
    await sql`CREATE INDEX ix_orders_status_seq ON orders(status, seq DESC)`.execute(db);
    await sql`CREATE TABLE idempotency_key (
      key              text PRIMARY KEY,
      request_hash     text NOT NULL,
      response_status  integer,
      response_body    jsonb,
      created_at       timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE idempotency_key`.execute(db);
    await sql`DROP TABLE orders`.execute(db);
  },
};

export const orderMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  '0001-orders': orders0001,
});

/**
 * Brings the database to the latest schema: the outbox library's tables (tracked in their own
 * migration table), then the service's. Safe to run on every start and from several processes.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  await migrateOutbox(db);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...orderMigrations }) },
    migrationTableName: 'order_service_migration',
    migrationLockTableName: 'order_service_migration_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(`order-service migration ${failed ?? '(unknown)'} failed`, { cause: error });
  }
}

/** Connects, migrates to the latest schema, disconnects: for start-up scripts and tests. */
export async function migrateDatabase(options: { url: string; logger: Logger }): Promise<void> {
  const db = createDatabase<unknown>({ url: options.url, poolSize: 1, logger: options.logger });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
