import { sql, type Kysely } from 'kysely';
import { heldByFence } from './commit-order-fence.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * Whether any outbox row waits for publication and can be published: a FAILED row, and the later
 * rows of its key that it holds back, wait for an operator, not for the relay (they show as
 * `outbox_failed_events`); a row the commit-order fence holds waits for a writer transaction
 * (`outbox_fence_held_events`). One probe of the unpublished index, and of the tiny index of
 * FAILED keys per candidate, and one read of `pg_locks` for the fence.
 */
export async function hasUnpublishedEvents(db: Kysely<OutboxTables>): Promise<boolean> {
  const result = await sql<{ waiting: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM outbox_event e
      WHERE e.published_at IS NULL AND e.failed_at IS NULL AND NOT ${heldByFence('e')}
        AND NOT EXISTS (
          SELECT 1 FROM outbox_event f
          WHERE f.partition_key = e.partition_key
            AND f.failed_at IS NOT NULL AND f.published_at IS NULL
        )
    ) AS waiting
  `.execute(db);
  return result.rows[0]?.waiting === true;
}
