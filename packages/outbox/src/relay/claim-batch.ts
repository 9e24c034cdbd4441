import { sql, type Transaction } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';

export interface ClaimedEvent {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly topic: string;
  readonly partition_key: string;
  /** The jsonb payload as JSON text: sent as is, no parse/stringify round trip in Node. */
  readonly payload: string;
  readonly headers: Record<string, string>;
  readonly created_at: Date;
}

const COLUMNS = sql.raw(
  'o.id, o.event_id, o.event_type, o.aggregate_type, o.aggregate_id, o.topic, o.partition_key, o.payload::text AS payload, o.headers, o.created_at',
);

/**
 * Claims (row-locks) the next batch in this transaction, keeping per-key order with any
 * number of relays:
 *
 * 1. Heads: among the `scanWindow` oldest unpublished rows that pass the commit-order fence
 *    (written by a transaction older than every transaction still running), the rows with no
 *    older unpublished row of their partition key. `SKIP LOCKED` leaves heads another relay
 *    holds; because a key's later rows are never heads while its head is unpublished, a key
 *    is in exactly one relay's hands at a time.
 * 2. Followers: later rows of the keys whose heads we hold, oldest first, each key cut at its
 *    first row that does not pass the fence (publishing past it could overtake that row).
 *
 * Returns the batch in id order (per key: enqueue order).
 */
export async function claimBatch(
  trx: Transaction<OutboxTables>,
  options: { readonly batchSize: number; readonly scanWindow: number },
): Promise<ClaimedEvent[]> {
  const heads = await sql<ClaimedEvent>`
    WITH candidate AS (
      SELECT id FROM outbox_event
      WHERE published_at IS NULL
        AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      ORDER BY id
      LIMIT ${Math.max(options.scanWindow, options.batchSize)}
    )
    SELECT ${COLUMNS}
    FROM outbox_event o
    WHERE o.id IN (SELECT id FROM candidate)
      AND o.published_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM outbox_event older
        WHERE older.partition_key = o.partition_key
          AND older.published_at IS NULL
          AND older.id < o.id
      )
    ORDER BY o.id
    LIMIT ${options.batchSize}
    FOR UPDATE OF o SKIP LOCKED
  `.execute(trx);
  const room = options.batchSize - heads.rows.length;
  if (heads.rows.length === 0 || room <= 0) return heads.rows;

  const headOf = new Map(heads.rows.map((row) => [row.partition_key, BigInt(row.id)]));
  // No SKIP LOCKED: nobody else can hold these rows while we hold their key's head, and a
  // skipped row in the middle of a key would break its order (lock_timeout bounds the wait).
  const followers = await sql<ClaimedEvent & { settled: boolean }>`
    SELECT ${COLUMNS},
      o.transaction_id < pg_snapshot_xmin(pg_current_snapshot()) AS settled
    FROM outbox_event o
    WHERE o.partition_key = ANY(${[...headOf.keys()]}::text[])
      AND o.published_at IS NULL
      AND o.id <> ALL(${heads.rows.map((row) => row.id)}::bigint[])
    ORDER BY o.id
    LIMIT ${room}
    FOR UPDATE OF o
  `.execute(trx);
  const blocked = new Set<string>();
  const batch: ClaimedEvent[] = [...heads.rows];
  for (const { settled, ...row } of followers.rows) {
    const head = headOf.get(row.partition_key);
    // Rows come in id order, so once a key is blocked all its later rows are skipped too.
    if (blocked.has(row.partition_key)) continue;
    // Not settled: publishing past it could overtake a transaction still in flight. Older
    // than the head: it became visible after the head was chosen; stop the key either way.
    if (!settled || head === undefined || BigInt(row.id) < head) {
      blocked.add(row.partition_key);
      continue;
    }
    batch.push(row);
  }
  return batch.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}
