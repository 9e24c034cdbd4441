import { sql, type Kysely } from 'kysely';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { ProgressReporter } from '../worker.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { lsnBytes, WalTimeline } from './wal-position.ts';

interface SlotState {
  readonly current: string;
  readonly confirmed: string | null;
}

/**
 * The connector's replication slot, as PostgreSQL sees it: lag in bytes and seconds, and
 * progress for the stall watch (WAL to confirm is work; a confirmation is progress).
 */
export interface SlotWatchSpec {
  readonly db: Kysely<OutboxTables>;
  readonly slot: string;
  readonly connector: string;
  readonly metrics: OutboxMetrics['cdc'] | undefined;
  readonly progress: ProgressReporter | undefined;
}

export class SlotWatch {
  readonly #spec: SlotWatchSpec;
  readonly #timeline = new WalTimeline();
  #lastConfirmed: bigint | undefined;

  constructor(spec: SlotWatchSpec) {
    this.#spec = spec;
  }

  async look(): Promise<void> {
    const { db, slot, connector, metrics, progress } = this.#spec;
    const { rows } = await sql<SlotState>`
      SELECT pg_current_wal_lsn()::text AS current, confirmed_flush_lsn::text AS confirmed
      FROM pg_replication_slots WHERE slot_name = ${slot}
    `.execute(db);
    const found = rows[0];
    if (found === undefined || found.confirmed === null) return;
    const now = Date.now();
    const current = lsnBytes(found.current);
    const confirmed = lsnBytes(found.confirmed);
    this.#timeline.sample(now, current);
    const lagBytes = current > confirmed ? current - confirmed : 0n;
    const labels = { connector };
    metrics?.slotLagBytes.set(labels, Number(lagBytes));
    metrics?.slotLagSeconds.set(labels, this.#timeline.secondsBehind(confirmed, now));
    progress?.hasWork(lagBytes > 0n);
    if (this.#lastConfirmed !== undefined && confirmed > this.#lastConfirmed)
      progress?.progressed();
    this.#lastConfirmed = confirmed;
  }
}
