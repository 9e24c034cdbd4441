import { sql, type Kysely } from 'kysely';
import { copiesPerEvent } from '../internal/redeliveries.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * The event ids of a batch the conflict clause dropped: each copy beyond the one stored (a batch
 * can carry an event twice, or an event stored by an earlier batch). `insertedIds` are the ids
 * the insert returned, lower case.
 */
export function repeatsOf(eventIds: readonly string[], insertedIds: readonly string[]): string[] {
  const firstCopies = new Set(insertedIds);
  const repeats: string[] = [];
  for (const eventId of eventIds) {
    const id = eventId.toLowerCase();
    if (!firstCopies.delete(id)) repeats.push(id);
  }
  return repeats;
}

/**
 * Adds each repeat to its stored row's `redeliveries`, in the transaction that dropped it, so
 * the count commits (or rolls back) with the batch; a batch stored in autocommit (nothing to
 * park) counts right after its INSERT, and a crash between the two loses only that count (the
 * redelivery that follows is counted). One statement, and only when a batch had
 * repeats: the common path pays nothing. An event repeated twice in one batch counts twice.
 * The row is matched by `event_id` alone, the key the conflict clause dropped the copy on.
 */
export async function countInboxRepeats(
  trx: Kysely<OutboxTables>,
  repeats: readonly string[],
): Promise<void> {
  if (repeats.length === 0) return;
  await sql`
    UPDATE inbox_event AS i SET redeliveries = i.redeliveries + r.copies
    FROM (${copiesPerEvent(repeats)}) AS r
    WHERE i.event_id = r.event_id
  `.execute(trx);
}
