import { sql, type Kysely } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';

/** A claimed row's attempt as the claim counted it. */
export interface CountedAttempt {
  readonly eventId: string;
  /** The row's `attempts` right after the claim, this attempt included. */
  readonly attempts: number;
}

/**
 * Uncounts attempts whose write transaction never began (see WriteNotStarted) and makes their
 * rows due again. Only a row still at the claim's count is touched: one claimed again since,
 * finished or dead keeps what it has. One statement, run by the processor on the connection of
 * its next claim, so giving back needs no connection the pool could not give.
 */
export async function giveBackAttempts(
  db: Kysely<OutboxTables>,
  owed: readonly CountedAttempt[],
): Promise<void> {
  if (owed.length === 0) return;
  await sql`
    UPDATE inbox_event i SET attempts = i.attempts - 1, next_attempt_at = now()
    FROM unnest(${owed.map((o) => o.eventId)}::uuid[], ${owed.map((o) => o.attempts)}::int[])
      AS owed(event_id, attempts)
    WHERE i.event_id = owed.event_id
      AND i.attempts = owed.attempts
      AND NOT i.processed
      AND i.dead_at IS NULL
  `.execute(db);
}
