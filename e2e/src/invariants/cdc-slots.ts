import type { System } from '../system.ts';

type Pool = System['orderDb'];

/**
 * In CDC mode nothing marks an outbox row published: the CDC relay's replication slot confirms
 * WAL positions once Kafka acknowledged what came before them. So "everything written so far
 * is published" is "the slot confirmed the WAL position of now".
 */
export class CdcSlotMarks {
  readonly #marks = new Map<Pool, string>();

  /** Notes where each database's WAL stands now; its slot must get there. */
  async mark(pools: readonly Pool[]): Promise<void> {
    for (const pool of pools) {
      const { rows } = await pool.query<{ position: string }>(
        'SELECT pg_current_wal_lsn()::text AS position',
      );
      if (rows[0] !== undefined) this.#marks.set(pool, rows[0].position);
    }
  }

  get marked(): boolean {
    return this.#marks.size > 0;
  }

  forget(): void {
    this.#marks.clear();
  }

  /** The databases whose CDC slot has not confirmed its mark yet, by description. */
  async behind(names: ReadonlyMap<Pool, string>): Promise<string[]> {
    const behind: string[] = [];
    for (const [pool, mark] of this.#marks) {
      const { rows } = await pool.query<{ confirmed: boolean | null }>(
        `SELECT bool_and(confirmed_flush_lsn >= $1::pg_lsn) AS confirmed
           FROM pg_replication_slots
          WHERE database = current_database() AND slot_name LIKE 'outbox_cdc_%'`,
        [mark],
      );
      if (rows[0]?.confirmed !== true) {
        behind.push(`${names.get(pool) ?? 'a'} outbox: CDC slot has not confirmed ${mark}`);
      }
    }
    return behind;
  }
}
