import { randomUUID } from 'node:crypto';
import { topics } from '@outbox-inbox/contracts';
import type pg from 'pg';

/** An outbox row Kafka must refuse, and the reason the relay must give. */
export interface PoisonRow {
  readonly name: string;
  readonly eventId: string;
  readonly partitionKey: string;
  readonly reason: RegExp;
}

/**
 * Writes rows straight into an outbox, as a buggy writer or a hand-made fix could: one
 * larger than the broker takes (1.5 MB, over `message.max.bytes`), one for a topic name Kafka
 * cannot have. Each on a key of its own, outside any order.
 */
export async function insertPoisonRows(outboxDb: pg.Pool): Promise<PoisonRow[]> {
  const rows = [
    {
      name: 'oversize row',
      topic: topics.orderEvents,
      payload: JSON.stringify({ blob: 'x'.repeat(1_500_000) }),
      reason: /too large|bytes/i,
    },
    {
      name: 'invalid topic name',
      topic: 'order events!',
      payload: '{}',
      reason: /topic/i,
    },
  ];
  const inserted: PoisonRow[] = [];
  for (const row of rows) {
    const eventId = randomUUID();
    const partitionKey = `poison-${randomUUID()}`;
    await outboxDb.query(
      `INSERT INTO outbox_event
         (event_id, aggregate_type, aggregate_id, event_type, payload, headers, topic, partition_key)
       VALUES ($1, 'poison', $2, 'PoisonRow', $3::jsonb, '{}'::jsonb, $4, $2)`,
      [eventId, partitionKey, row.payload, row.topic],
    );
    inserted.push({ name: row.name, eventId, partitionKey, reason: row.reason });
  }
  return inserted;
}

/** Copies of published events of an outbox, as the relay sent them: duplicates to inject. */
export async function copiesOfPublished(
  outboxDb: pg.Pool,
  count: number,
): Promise<
  { eventId: string; topic: string; key: Buffer; value: Buffer; headers: Record<string, string> }[]
> {
  const { rows } = await outboxDb.query<{
    event_id: string;
    event_type: string;
    aggregate_type: string;
    aggregate_id: string;
    partition_key: string;
    topic: string;
    payload: string;
    headers: Record<string, string>;
    created_at: Date;
  }>(
    `SELECT event_id, event_type, aggregate_type, aggregate_id, partition_key, topic,
        payload::text AS payload, headers, created_at
       FROM outbox_event WHERE published_at IS NOT NULL AND skipped_at IS NULL
       ORDER BY id LIMIT $1`,
    [count],
  );
  return rows.map((row) => ({
    eventId: row.event_id,
    topic: row.topic,
    key: Buffer.from(row.partition_key),
    value: Buffer.from(row.payload),
    headers: {
      ...row.headers,
      event_id: row.event_id,
      event_type: row.event_type,
      aggregate_type: row.aggregate_type,
      aggregate_id: row.aggregate_id,
      occurred_at: row.created_at.toISOString(),
    },
  }));
}
