import { sql, type Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

export interface ReplaySelection {
  /** Inclusive outbox id range. */
  readonly fromId?: string | number | bigint;
  readonly toId?: string | number | bigint;
  /** Inclusive `created_at` range. */
  readonly since?: Date;
  readonly until?: Date;
  readonly topic?: string;
}

/**
 * Queues published outbox rows again (sets `published_at` back to NULL), so the relay
 * republishes them through the normal path: in id order per key, ahead of newer rows of the
 * same key. For rebuilding read models, or after "Kafka lost its data". Consumers see
 * duplicates and drop them. Rows an operator skipped (never published) are left alone.
 *
 * Works in statements of whole partition keys: every selected row of a key is queued by the
 * same statement. Were a key's rows split over statements (chunks by id), a running relay
 * could publish the key's newer rows between them, after the first part of the replay and
 * before the rest. Returns how many rows were queued.
 */
export async function replayOutbox<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  selection: ReplaySelection,
  options: { readonly keysPerStatement?: number } = {},
): Promise<number> {
  const db = outboxDb(dbIn);
  const keysPerStatement = options.keysPerStatement ?? 1000;
  const selected = sql`
    published_at IS NOT NULL
    AND skipped_at IS NULL
    ${selection.fromId === undefined ? sql`` : sql`AND id >= ${String(selection.fromId)}::bigint`}
    ${selection.toId === undefined ? sql`` : sql`AND id <= ${String(selection.toId)}::bigint`}
    ${selection.since === undefined ? sql`` : sql`AND created_at >= ${selection.since}`}
    ${selection.until === undefined ? sql`` : sql`AND created_at <= ${selection.until}`}
    ${selection.topic === undefined ? sql`` : sql`AND topic = ${selection.topic}`}
  `;
  const keys = await sql<{ partition_key: string }>`
    SELECT DISTINCT partition_key FROM outbox_event WHERE ${selected}
  `.execute(db);
  let total = 0;
  for (let from = 0; from < keys.rows.length; from += keysPerStatement) {
    const chunk = keys.rows.slice(from, from + keysPerStatement).map((row) => row.partition_key);
    const result = await sql`
      UPDATE outbox_event SET published_at = NULL
      WHERE partition_key = ANY(${chunk}::text[]) AND ${selected}
    `.execute(db);
    total += Number(result.numAffectedRows ?? 0n);
  }
  return total;
}
