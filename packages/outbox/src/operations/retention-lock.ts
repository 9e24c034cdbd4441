import { sql, type Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { runRetention, type RetentionOptions, type RetentionResult } from './retention.ts';

/**
 * The advisory lock every retention run of a database takes: the retention role of each
 * replica and `outbox retention` share it, so one works at a time. Advisory locks are per
 * database, so two services' databases on one server do not contend.
 */
export const RETENTION_LOCK_ID = 4_207_118_341_590_811_002n;

/**
 * {@link runRetention} under {@link RETENTION_LOCK_ID}, on one connection held for the run:
 * undefined, deleting nothing, when another run holds the lock. The lock is a session lock,
 * so each batch still commits on its own, and a run that dies (process killed, connection
 * lost) releases it with its connection.
 */
export async function runRetentionExclusively<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  options: RetentionOptions,
): Promise<RetentionResult | undefined> {
  return outboxDb(dbIn)
    .connection()
    .execute(async (connection) => {
      const locked = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_lock(${RETENTION_LOCK_ID}) AS locked
      `.execute(connection);
      if (locked.rows[0]?.locked !== true) return undefined;
      try {
        return await runRetention(connection, options);
      } finally {
        await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_ID})`.execute(connection);
      }
    });
}
