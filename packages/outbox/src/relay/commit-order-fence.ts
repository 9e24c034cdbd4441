import { sql, type Kysely, type RawBuilder } from 'kysely';
import { OUTBOX_WRITER_LOCK } from '../enqueue/announced-writer.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * The commit-order fence of the running statement (xid8): the oldest transaction in progress
 * in its snapshot that holds the writer lock in this database, or that ended since (it may
 * have committed outbox rows this snapshot cannot see); with none, the snapshot's xmax. Other
 * running transactions have written no outbox row yet: whatever they write later is invisible
 * to this snapshot and meets the next claim's fence. An uncorrelated subquery: computed once
 * per statement, with one read of `pg_locks`.
 *
 * `pg_locks` is read (the hashed subplan, built on the first test) before any
 * `pg_xact_status`: CASE keeps that order, so a writer that ends between the two is seen
 * by the second. The xid of a lock holder is found through its own `transactionid` lock (same
 * virtual transaction): live, unlike `pg_stat_activity`, which a transaction reads once and
 * keeps.
 */
export const COMMIT_ORDER_FENCE: RawBuilder<string> = sql.raw(`coalesce((
    WITH held AS MATERIALIZED (
      SELECT locktype, virtualtransaction, transactionid, database, classid, objid, objsubid
      FROM pg_locks WHERE granted AND locktype IN ('advisory', 'transactionid')
    )
    SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
    WHERE CASE
      WHEN x::xid IN (
        SELECT t.transactionid FROM held a JOIN held t USING (virtualtransaction)
        WHERE a.locktype = 'advisory' AND a.objsubid = 2
          AND a.classid = ${OUTBOX_WRITER_LOCK[0]} AND a.objid = ${OUTBOX_WRITER_LOCK[1]}
          AND a.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND t.locktype = 'transactionid'
      ) THEN true
      ELSE pg_xact_status(x) <> 'in progress'
    END
  ), pg_snapshot_xmax(pg_current_snapshot()))`);

/**
 * Rows of `alias` the fence holds back: visible (committed) rows written by a transaction
 * newer than the fence. Rows at or above the snapshot's xmax were copied from another cluster
 * and are not held (see `settled` in claim-batch.ts).
 */
export function heldByFence(alias: string): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(`${alias}.transaction_id`)} >= ${COMMIT_ORDER_FENCE} AND ${sql.ref(`${alias}.transaction_id`)} < pg_snapshot_xmax(pg_current_snapshot()))`;
}

/**
 * Age in ms of the oldest row the fence holds back now (0: none). It walks the unpublished
 * rows in id order and stops at the first one held: cheap when the fence holds the head of the
 * backlog, which is when it matters.
 */
export async function oldestHeldByFenceMs(db: Kysely<OutboxTables>): Promise<number> {
  const result = await sql<{ age_ms: number }>`
    SELECT (extract(epoch FROM now() - o.created_at) * 1000)::float8 AS age_ms
    FROM outbox_event o
    WHERE o.published_at IS NULL AND o.failed_at IS NULL AND ${heldByFence('o')}
    ORDER BY o.id
    LIMIT 1
  `.execute(db);
  return Math.max(0, result.rows[0]?.age_ms ?? 0);
}
