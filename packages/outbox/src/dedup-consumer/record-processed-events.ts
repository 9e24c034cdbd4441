import { sql, type Transaction } from 'kysely';
import { copiesPerEvent } from '../internal/redeliveries.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * The dedup consumer's step for a set of events (R-DIST-OBX-2): writes
 * every `(consumer, eventId)` row with ONE statement, whatever the number of events, and
 * returns, per position, whether that copy is the first delivery (its effect must run in this
 * transaction) or a repeat (already applied, or an earlier copy in the same set). Repeats are
 * counted in their row's `redeliveries` by a second statement, only when there are some. A
 * concurrent repeat in another transaction waits on the first one's insert, then counts itself.
 */
export async function recordProcessedEvents(
  trx: Transaction<OutboxTables>,
  consumer: string,
  eventIds: readonly string[],
): Promise<boolean[]> {
  if (eventIds.length === 0) return [];
  const result = await sql<{ event_id: string }>`
    INSERT INTO processed_event (consumer, event_id)
    SELECT ${consumer}, e.event_id FROM unnest(${eventIds}::uuid[]) AS e(event_id)
    ON CONFLICT (consumer, event_id) DO NOTHING
    RETURNING event_id::text AS event_id
  `.execute(trx);
  // PostgreSQL returns a uuid in lower case; the first copy of each returned id is the new one.
  const firstCopies = new Set(result.rows.map((row) => row.event_id));
  const isNew: boolean[] = [];
  const repeats: string[] = [];
  for (const eventId of eventIds) {
    const fresh = firstCopies.delete(eventId.toLowerCase());
    isNew.push(fresh);
    if (!fresh) repeats.push(eventId);
  }
  if (repeats.length > 0) {
    // The `= ANY` repeats the join's keys for the planner (see createPgPool).
    await sql`
      UPDATE processed_event AS p SET redeliveries = p.redeliveries + r.copies
      FROM (${copiesPerEvent(repeats)}) AS r
      WHERE p.consumer = ${consumer} AND p.event_id = ANY(${repeats}::uuid[])
        AND p.event_id = r.event_id
    `.execute(trx);
  }
  return isNew;
}
