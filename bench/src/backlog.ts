import { sql, type Kysely } from 'kysely';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { OUTBOX_CHANNEL } from '@outbox-inbox/outbox/ops';

/**
 * Writes `events` unpublished outbox rows in one transaction, as `enqueue` would (the
 * transaction id for the commit-order fence comes from the column default), and NOTIFYs the
 * relays at commit. Payloads are ~500-byte OrderCreated-shaped JSON documents (valid against
 * the contracts package, plus a `note` for size) over `keys` order ids.
 */
export async function writeBacklog(
  db: Kysely<OutboxTables>,
  options: { readonly events: number; readonly keys: number; readonly topic: string },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`
      INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload, topic, partition_key)
      SELECT gen_random_uuid(), 'order', k.id, 'OrderCreated',
        jsonb_build_object(
          'schemaVersion', 1, 'orderId', k.id, 'customerId', 'customer-' || (i % 997),
          'amount', 1000 + i % 40000, 'currency', 'EUR',
          'createdAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'seq', i, 'note', repeat('x', 300)),
        ${options.topic}, k.id
      FROM generate_series(1, ${options.events}) AS i,
        LATERAL (SELECT md5('key-' || (i % ${options.keys}))::uuid::text AS id) AS k`.execute(trx);
    await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx);
  });
}

/** Empties the outbox (between runs: every run starts from the same table shape). */
export async function clearOutbox(db: Kysely<OutboxTables>): Promise<void> {
  await sql`TRUNCATE outbox_event`.execute(db);
  await sql`VACUUM ANALYZE outbox_event`.execute(db);
}

export async function unpublishedLeft(db: Kysely<OutboxTables>): Promise<boolean> {
  const result = await sql<{
    left: boolean;
  }>`SELECT EXISTS (SELECT 1 FROM outbox_event WHERE published_at IS NULL) AS left`.execute(db);
  return result.rows[0]?.left ?? false;
}

export async function averagePayloadBytes(db: Kysely<OutboxTables>): Promise<number> {
  const result = await sql<{
    bytes: number;
  }>`SELECT coalesce(avg(octet_length(payload::text)), 0)::int AS bytes FROM outbox_event`.execute(
    db,
  );
  return result.rows[0]?.bytes ?? 0;
}
