import { sql, type Kysely, type RawBuilder } from 'kysely';
import { recordBytes } from '../enqueue/kafka-limits.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { COMMIT_ORDER_FENCE } from './commit-order-fence.ts';
import { toEventRecord } from '../kafka-port/event-record.ts';

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
  /** Times Kafka refused this row before. */
  readonly publish_attempts: number;
}

export interface ClaimedBatch {
  /** The claimed rows in id order (per key: enqueue order). */
  readonly events: ClaimedEvent[];
  /** The claim stopped at `batchSize` or `maxBatchBytes`: more rows are waiting. */
  readonly full: boolean;
}

export interface ClaimOptions {
  readonly batchSize: number;
  readonly scanWindow: number;
  readonly maxBatchBytes: number;
}

const COLUMNS = sql.raw(
  'o.id, o.event_id, o.event_type, o.aggregate_type, o.aggregate_id, o.topic, o.partition_key, o.payload::text AS payload, o.headers, o.created_at, o.publish_attempts',
);

/**
 * The commit-order fence for rows of `alias`: written by a transaction older than every
 * outbox writer still running in this database (`COMMIT_ORDER_FENCE`). Or, with an xid at or
 * above the snapshot's `xmax`: no transaction of this cluster has had that xid yet, so a row
 * we can see that carries one was copied from another cluster (dump/restore, logical move)
 * whose counter ran ahead; nothing of ours can be in flight before it. Without that, such rows
 * (and their keys) would wait until this cluster's counter caught up.
 */
function settled(alias: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.raw(alias)}.transaction_id < ${COMMIT_ORDER_FENCE} OR ${sql.raw(alias)}.transaction_id >= pg_snapshot_xmax(pg_current_snapshot()))`;
}

/**
 * What the claim counts for a row beyond its variable columns: record framing, the standard
 * headers' names and their fixed-size values (event id, timestamp). The variable columns are
 * added in SQL, the event's own headers as their JSON text (a little more than Kafka takes).
 */
const FIXED_ROW_BYTES = recordBytes(
  toEventRecord({
    topic: '',
    event_id: '00000000-0000-0000-0000-000000000000',
    event_type: '',
    aggregate_type: '',
    aggregate_id: '',
    partition_key: '',
    payload: '',
    headers: {},
    created_at: new Date(0),
  }),
);

/**
 * Wraps a locking CTE named `locked` (rows with a `payload` text column): each row's estimated
 * bytes and the running total in id order, keeping the rows up to `budget` (and, when
 * `atLeastOne`, the first row whatever its size). `locked` counts the rows before the cut.
 * `extraColumns` (`, expr AS name`) are computed for the kept rows alone.
 */
function withinBudget(
  budget: RawBuilder<unknown>,
  atLeastOne: boolean,
  extraColumns: RawBuilder<unknown> = sql``,
): RawBuilder<unknown> {
  return sql`
    sized AS (
      SELECT locked.*,
        octet_length(locked.payload) + octet_length(locked.partition_key)
          + octet_length(locked.event_type) + octet_length(locked.aggregate_type)
          + octet_length(locked.aggregate_id) + octet_length(locked.headers::text)
          + ${sql.lit(FIXED_ROW_BYTES)} AS bytes
      FROM locked
    ),
    running AS (
      SELECT sized.*, sum(bytes) OVER (ORDER BY id) AS upto, count(*) OVER () AS locked_rows
      FROM sized
    )
    SELECT running.* ${extraColumns} FROM running
    WHERE upto <= ${budget} ${atLeastOne ? sql`OR upto = bytes` : sql``}
    ORDER BY id
  `;
}

type Sized<T> = T & { bytes: string; upto: string; locked_rows: string };

/**
 * Claims (row-locks) the next batch in this transaction, keeping per-key order with any
 * number of relays:
 *
 * 1. Heads: among the `scanWindow` oldest unpublished rows that pass the commit-order fence
 *    and whose key is not held back by a FAILED row, the rows with no older unpublished row
 *    of their partition key. `SKIP LOCKED` leaves heads another relay holds; because a key's
 *    later rows are never heads while its head is unpublished, a key is in exactly one
 *    relay's hands at a time. A FAILED row is never a head and, being unpublished, keeps its
 *    key's later rows from being heads: its key waits, and only its key.
 * 2. Followers: later rows of the keys whose heads we hold, oldest first, each key cut at its
 *    first row that does not pass the fence or is FAILED.
 *
 * Both stop before the batch's estimated bytes pass `maxBatchBytes` (the first head is taken
 * whatever its size). Locked rows left out stay unpublished; the locks end with the batch.
 * The followers query runs only when a head has a later unpublished row of its key.
 *
 * The heads claim carries the relay's sizes as literals, not parameters: its text is the same
 * for every batch of a relay, and a statement without parameters has one plan for all its
 * executions, so a connection that prepared it plans it once (inside a batch transaction,
 * with its plan settings) instead of once per batch. A LIMIT given as a parameter would get
 * a generic plan that drains a backlog several times slower (see bench/analysis.md).
 */
export async function claimBatch(
  trx: Kysely<OutboxTables>,
  options: ClaimOptions,
): Promise<ClaimedBatch> {
  const heads = await claimHeads(trx, options);
  // The sizing columns ride along on the rows; nothing reads them past this function.
  const headRows: ClaimedEvent[] = heads.rows;
  const lastHead = heads.rows[heads.rows.length - 1];
  if (lastHead === undefined) return { events: [], full: false };
  const headsCut = headRows.length < Number(lastHead.locked_rows);
  const room = options.batchSize - headRows.length;
  const budget = options.maxBatchBytes - Number(lastHead.upto);
  if (headsCut || room <= 0 || budget <= 0) return { events: headRows, full: true };
  // No head has a later unpublished row of its key (as the heads' snapshot saw it): nothing to
  // follow. A follower committed since waits for the next claim, as one committed later would.
  if (!heads.rows.some((row) => row.has_followers)) return { events: headRows, full: false };

  const followers = await claimFollowers(trx, headRows, room, budget);
  const fetched = headRows.length + followers.fetched;
  return {
    events: [...headRows, ...followers.rows].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)),
    full: followers.cut || fetched >= options.batchSize,
  };
}

/** Step 1: the heads of keys, locked, within the batch's size and bytes. */
async function claimHeads(trx: Kysely<OutboxTables>, options: ClaimOptions) {
  return sql<Sized<ClaimedEvent & { has_followers: boolean }>>`
    WITH candidate AS (
      SELECT c.id FROM outbox_event c
      WHERE c.published_at IS NULL
        AND c.failed_at IS NULL
        AND ${settled('c')}
        AND NOT EXISTS (
          SELECT 1 FROM outbox_event f
          WHERE f.partition_key = c.partition_key
            AND f.failed_at IS NOT NULL
            AND f.published_at IS NULL
        )
      ORDER BY c.id
      LIMIT ${sql.lit(Math.max(options.scanWindow, options.batchSize))}
    ),
    locked AS (
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
      LIMIT ${sql.lit(options.batchSize)}
      FOR UPDATE OF o SKIP LOCKED
    ),
    ${withinBudget(
      sql.lit(options.maxBatchBytes),
      true,
      // Asked only when the heads leave room (CASE does not evaluate it otherwise): a batch
      // that heads fill takes no followers anyway, and then no head pays for an index probe.
      sql`, CASE WHEN locked_rows < ${sql.lit(options.batchSize)} THEN EXISTS (
          SELECT 1 FROM outbox_event later
          WHERE later.partition_key = running.partition_key
            AND later.published_at IS NULL
            AND later.id > running.id
        ) ELSE false END AS has_followers`,
    )}
  `.execute(trx);
}

/**
 * Step 2: later rows of the heads' keys, oldest first, each key cut at its first row that
 * does not pass the fence or is FAILED, or that is older than its head (it became visible
 * after the head was chosen).
 */
async function claimFollowers(
  trx: Kysely<OutboxTables>,
  headRows: readonly ClaimedEvent[],
  room: number,
  budget: number,
): Promise<{ rows: ClaimedEvent[]; fetched: number; cut: boolean }> {
  const headOf = new Map(headRows.map((row) => [row.partition_key, BigInt(row.id)]));
  // No SKIP LOCKED: nobody else can hold these rows while we hold their key's head, and a
  // skipped row in the middle of a key would break its order (lock_timeout bounds the wait).
  const followers = await sql<Sized<ClaimedEvent & { held_back: boolean }>>`
    WITH locked AS (
      SELECT ${COLUMNS},
        NOT ${settled('o')} OR o.failed_at IS NOT NULL AS held_back
      FROM outbox_event o
      WHERE o.partition_key = ANY(${[...headOf.keys()]}::text[])
        AND o.published_at IS NULL
        AND o.id <> ALL(${headRows.map((row) => row.id)}::bigint[])
      ORDER BY o.id
      LIMIT ${room}
      FOR UPDATE OF o
    ),
    ${withinBudget(sql`${budget}`, false)}
  `.execute(trx);
  const lastFollower = followers.rows[followers.rows.length - 1];
  const cut =
    lastFollower === undefined ? false : followers.rows.length < Number(lastFollower.locked_rows);
  const blocked = new Set<string>();
  const rows: ClaimedEvent[] = [];
  for (const { held_back: heldBack, ...row } of followers.rows) {
    const head = headOf.get(row.partition_key);
    // Rows come in id order, so once a key is blocked all its later rows are skipped too.
    if (blocked.has(row.partition_key)) continue;
    // Held back: publishing past it could overtake a transaction still in flight (or a FAILED
    // row). Older than the head: it became visible after the head was chosen. Stop the key.
    if (heldBack || head === undefined || BigInt(row.id) < head) {
      blocked.add(row.partition_key);
      continue;
    }
    rows.push(row);
  }
  return { rows, fetched: followers.rows.length, cut };
}
