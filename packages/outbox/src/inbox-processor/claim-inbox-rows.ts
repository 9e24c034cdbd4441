import { sql, type Kysely } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';

export interface InboxRow {
  readonly event_id: string;
  readonly seq: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly partition_key: string;
  readonly payload: unknown;
  readonly headers: Record<string, string>;
  readonly topic: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
  readonly occurred_at: Date;
  readonly received_at: Date;
  /** Attempts counted so far, this one included. */
  readonly attempts: number;
  /** True when the row had no attempt left: it was marked dead instead of claimed. */
  readonly gave_up: boolean;
}

export interface InboxClaim {
  /** The claimed rows, in the order their keys' heads arrived. */
  readonly rows: InboxRow[];
  /** Due heads that this claim locked but left, or may have left: the claim was full. */
  readonly headsLeft: boolean;
  /** A claimed key has a later unprocessed row: it is due when this claim's row is done. */
  readonly keysContinue: boolean;
}

/**
 * Claims up to `limit` of the oldest rows that are due and are the head of their partition key
 * (no older row of the key is unprocessed, dead ones included: a dead row holds its key back
 * until an operator requeues or discards it), so no two rows claimed share a key, and counts
 * each one's attempt, in one statement that commits on its own. The count survives whatever
 * the handlers then do to their transaction or their process. `next_attempt_at` moves
 * `leaseMs` ahead, so no other processor claims the rows while this attempt may still run; if
 * the process dies, they are due again after the lease.
 *
 * Only first attempts share a claim. A row tried before is claimed alone, so a handler that
 * takes its process down (or hangs) uses up its own row's attempts, not those of the rows it
 * would share a transaction with: a neighbour loses at most the one attempt of the claim the
 * crash hit.
 *
 * A row that has used all `maxAttempts` without recording an outcome (each attempt hung or
 * took its process down) is marked dead instead, with that reason.
 *
 * The same statement says whether another claim could find work right now: due heads this
 * claim left (`headsLeft`), or later rows of the claimed keys, which become heads when these
 * rows are done (`keysContinue`). A worker that sees neither waits for a NOTIFY instead of
 * paying an empty claim to find out.
 *
 * The options are in the text as literals, not parameters, and the text holds no `;`: a
 * statement without parameters is prepared (pg-pool/statement-preparing-client.ts) and planned
 * once per connection, with the values it runs with. With parameters, PostgreSQL would plan
 * each execution for a while and might then keep a plan made without them, which for this
 * claim anti-joined every unprocessed row instead of probing each candidate's key. Planning
 * this statement at every execution cost PostgreSQL more than running it (B9 at 30 orders/s:
 * 0.51 ms a call against 0.20).
 */
export async function claimInboxRows(
  db: Kysely<OutboxTables>,
  options: { readonly limit: number; readonly maxAttempts: number; readonly leaseMs: number },
): Promise<InboxClaim> {
  const unfinished = `${options.maxAttempts} attempt(s) started and none finished: the handler hung past its timeout or its process died`;
  const max = sql.lit(options.maxAttempts);
  const result = await sql<ClaimedRow>`
    WITH head AS (
      SELECT i.event_id, i.seq, i.attempts
      FROM inbox_event i
      WHERE NOT i.processed
        AND i.dead_at IS NULL
        AND i.next_attempt_at <= now()
        AND NOT EXISTS (
          SELECT 1 FROM inbox_event older
          WHERE older.partition_key = i.partition_key
            AND NOT older.processed
            AND older.seq < i.seq
        )
      -- The guide's index of unprocessed rows. Per-key order is the NOT EXISTS above.
      ORDER BY i.received_at
      LIMIT ${sql.lit(options.limit)}
      FOR UPDATE OF i SKIP LOCKED
    ), oldest AS (
      SELECT seq, attempts FROM head ORDER BY seq LIMIT 1
    ), claimed AS (
      SELECT head.event_id FROM head, oldest
      WHERE CASE WHEN oldest.attempts > 0 THEN head.seq = oldest.seq ELSE head.attempts = 0 END
    ), counted AS (
      UPDATE inbox_event i SET
        attempts = CASE WHEN i.attempts < ${max} THEN i.attempts + 1 ELSE i.attempts END,
        dead_at = CASE WHEN i.attempts >= ${max} THEN now() END,
        last_error = CASE WHEN i.attempts >= ${max}
          THEN ${sql.lit(unfinished)} || coalesce(' (last recorded error: ' || i.last_error || ')', '')
          ELSE i.last_error END,
        next_attempt_at = now() + make_interval(secs => ${sql.lit(options.leaseMs / 1000)})
      FROM claimed
      WHERE i.event_id = claimed.event_id
      RETURNING i.event_id, i.seq, i.event_type, i.aggregate_type, i.aggregate_id,
        i.partition_key, i.payload, i.headers, i.topic, i.kafka_partition, i.kafka_offset,
        i.occurred_at, i.received_at, i.attempts, i.dead_at IS NOT NULL AS gave_up
    )
    -- In the order the keys' heads arrived.
    SELECT counted.*,
      (SELECT count(*) FROM head) AS heads_locked,
      EXISTS (
        SELECT 1 FROM inbox_event later
        WHERE later.partition_key = counted.partition_key
          AND NOT later.processed
          AND later.seq > counted.seq
      ) AS key_continues
    FROM counted ORDER BY seq
  `.execute(db);
  return toClaim(result.rows, options.limit);
}

type ClaimedRow = InboxRow & { readonly heads_locked: string; readonly key_continues: boolean };

/** The claim's rows, and what its statement said about the work left. */
function toClaim(claimed: readonly ClaimedRow[], limit: number): InboxClaim {
  const rows = claimed.map(({ heads_locked: _, key_continues: __, ...row }) => row);
  const headsLocked = Number(claimed[0]?.heads_locked ?? 0);
  return {
    rows,
    headsLeft: headsLocked >= limit || headsLocked > rows.length,
    keysContinue: claimed.some((row) => row.key_continues),
  };
}
