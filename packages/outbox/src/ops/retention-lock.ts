import type { Kysely } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';
import { runRetentionLocked, type RetentionOptions, type RetentionResult } from './retention.ts';

/**
 * The advisory lock every batch of a retention run takes: the retention role of each
 * replica and `outbox retention` share it, so no two of their batches delete at once. Advisory
 * locks are per database, so two services' databases on one server do not contend.
 */
export const RETENTION_LOCK_ID = 4_207_118_341_590_811_002n;

/**
 * {@link runRetention} under {@link RETENTION_LOCK_ID}: undefined, deleting nothing, when
 * another run holds the lock. Each batch takes it in its own transaction (a transaction-level
 * lock), so each batch still commits on its own, a run that dies releases it with its last
 * transaction, and behind a pooler in transaction mode (PgBouncer) no lock is left behind on a
 * server connection, as a session lock taken and released by two statements would be.
 */
export async function runRetentionExclusively<DB extends OutboxTables>(
  db: Kysely<DB>,
  options: RetentionOptions,
): Promise<RetentionResult | undefined> {
  return runRetentionLocked(db, options, RETENTION_LOCK_ID);
}
