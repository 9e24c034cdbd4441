import { migrateServiceSchema, withOneConnection } from '@outbox-inbox/service-kit';
import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Logger } from 'pino';

const payments0001: Migration = {
  async up(db) {
    await sql`CREATE TABLE payments (
      id              uuid PRIMARY KEY,
      order_id        uuid NOT NULL UNIQUE,
      customer_id     text NOT NULL,
      amount          bigint NOT NULL CHECK (amount > 0),
      currency        char(3) NOT NULL,
      status          text NOT NULL CHECK (status IN ('COMPLETED', 'FAILED', 'REFUNDED')),
      failure_reason  text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now(),
      refunded_at     timestamptz
    )`.execute(db);
    await sql`CREATE INDEX ix_payments_created_at ON payments(created_at DESC)`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE payments`.execute(db);
  },
};

/**
 * Every order event the processor applied, in the handler's transaction, in the order applied.
 * Deliberately without a UNIQUE on event_id: the handlers are idempotent by their own rules
 * (one payment per order, refund only a completed payment), which would hide a second
 * application; here it shows (the resilience suite counts them).
 */
const paymentHistory0002: Migration = {
  async up(db) {
    await sql`CREATE TABLE payment_history (
      seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      order_id    uuid NOT NULL,
      event_id    uuid NOT NULL,
      event_type  text NOT NULL,
      outcome     text NOT NULL CHECK (outcome IN ('COMPLETED', 'FAILED', 'REFUNDED', 'UNCHANGED')),
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
    await sql`CREATE INDEX ix_payment_history_order ON payment_history(order_id, seq)`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE payment_history`.execute(db);
  },
};

export const paymentMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  '0001-payments': payments0001,
  '0002-payment-history': paymentHistory0002,
});

/**
 * Brings the database to the latest schema: the outbox library's tables, then the service's
 * (tracked in `payment_service_migration`). Safe to run on every start and from several processes.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  await migrateServiceSchema(db, {
    service: 'payment-service',
    migrations: paymentMigrations,
    migrationTableName: 'payment_service_migration',
  });
}

/** Connects, migrates to the latest schema, disconnects: for start-up scripts and tests. */
export async function migrateDatabase(options: { url: string; logger: Logger }): Promise<void> {
  await withOneConnection(options, migrateToLatest);
}
