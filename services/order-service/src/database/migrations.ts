import { migrateServiceSchema, withOneConnection } from '@outbox-inbox/service-kit';
import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
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

/**
 * The order's journey: one row per event the order emitted (OrderCreated, OrderCancelled) or
 * applied (Payment*), written in the same transaction as the change. Deliberately without a
 * UNIQUE on event_id: if a payment event were ever applied twice, the second row must show,
 * not be silently refused (the resilience suite counts them).
 */
const orderHistory0002: Migration = {
  async up(db) {
    await sql`CREATE TABLE order_history (
      seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      order_id        uuid NOT NULL REFERENCES orders(id),
      event_id        uuid NOT NULL,
      event_type      text NOT NULL,
      status          text NOT NULL,
      payment_status  text,
      recorded_at     timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
    await sql`CREATE INDEX ix_order_history_order ON order_history(order_id, seq)`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE order_history`.execute(db);
  },
};

/**
 * Retention deletes idempotency keys by age, a batch at a time. Without an index on the age
 * each batch read the whole table to find its rows, and the last batch of every run (a few
 * rows, or none) read all of it: a day of keys at 30 orders/s is 2.6 million rows.
 */
const idempotencyKeyAge0003: Migration = {
  async up(db) {
    await sql`CREATE INDEX ix_idempotency_key_created_at ON idempotency_key(created_at)`.execute(
      db,
    );
  },
  async down(db) {
    await sql`DROP INDEX ix_idempotency_key_created_at`.execute(db);
  },
};

export const orderMigrations: Readonly<Record<string, Migration>> = Object.freeze({
  '0001-orders': orders0001,
  '0002-order-history': orderHistory0002,
  '0003-idempotency-key-age': idempotencyKeyAge0003,
});

/**
 * Brings the database to the latest schema: the outbox library's tables, then the service's
 * (tracked in `order_service_migration`). Safe to run on every start and from several processes.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  await migrateServiceSchema(db, {
    service: 'order-service',
    migrations: orderMigrations,
    migrationTableName: 'order_service_migration',
  });
}

/** Connects, migrates to the latest schema, disconnects: for start-up scripts and tests. */
export async function migrateDatabase(options: { url: string; logger: Logger }): Promise<void> {
  await withOneConnection(options, migrateToLatest);
}
