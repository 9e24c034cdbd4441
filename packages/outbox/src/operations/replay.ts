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
 * duplicates and drop them. Works in chunks so no transaction holds many row locks.
 * Returns how many rows were queued.
 */
export async function replayOutbox<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  selection: ReplaySelection,
  options: { readonly chunkSize?: number } = {},
): Promise<number> {
  const db = outboxDb(dbIn);
  const chunkSize = options.chunkSize ?? 5000;
  let total = 0;
  let after = '0';
  for (;;) {
    const result = await sql<{ id: string }>`
      WITH chunk AS (
        SELECT id FROM outbox_event
        WHERE id > ${after}::bigint
          AND published_at IS NOT NULL
          ${selection.fromId === undefined ? sql`` : sql`AND id >= ${String(selection.fromId)}::bigint`}
          ${selection.toId === undefined ? sql`` : sql`AND id <= ${String(selection.toId)}::bigint`}
          ${selection.since === undefined ? sql`` : sql`AND created_at >= ${selection.since}`}
          ${selection.until === undefined ? sql`` : sql`AND created_at <= ${selection.until}`}
          ${selection.topic === undefined ? sql`` : sql`AND topic = ${selection.topic}`}
        ORDER BY id
        LIMIT ${chunkSize}
        FOR UPDATE
      )
      UPDATE outbox_event o SET published_at = NULL
      FROM chunk WHERE o.id = chunk.id
      RETURNING o.id
    `.execute(db);
    if (result.rows.length === 0) break;
    total += result.rows.length;
    after = result.rows.reduce((max, row) => (BigInt(row.id) > BigInt(max) ? row.id : max), after);
  }
  return total;
}
