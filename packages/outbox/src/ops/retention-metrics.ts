import { Counter, Gauge, type Registry } from 'prom-client';

/** What the retention job reports: rows deleted per table, runs by outcome, the last run. */
export interface RetentionMetrics {
  readonly deletedTotal: Counter<'table'>;
  /** `completed`, `locked_elsewhere` (another instance was at work) or `failed`. */
  readonly runsTotal: Counter<'outcome'>;
  readonly lastRunTimestamp: Gauge;
  readonly lastRunDurationSeconds: Gauge;
}

/** Registers the retention job's metrics in `registry`. */
export function createRetentionMetrics(registry: Registry): RetentionMetrics {
  const registers = [registry];
  return {
    deletedTotal: new Counter({
      name: 'outbox_retention_deleted_rows_total',
      help: 'Rows the retention job deleted, by table',
      labelNames: ['table'],
      registers,
    }),
    runsTotal: new Counter({
      name: 'outbox_retention_runs_total',
      help: 'Retention runs by outcome: completed, locked_elsewhere (another instance ran), failed',
      labelNames: ['outcome'],
      registers,
    }),
    lastRunTimestamp: new Gauge({
      name: 'outbox_retention_last_run_timestamp_seconds',
      help: 'When the last completed retention run ended (Unix time; 0 before the first)',
      registers,
    }),
    lastRunDurationSeconds: new Gauge({
      name: 'outbox_retention_last_run_duration_seconds',
      help: 'How long the last completed retention run took',
      registers,
    }),
  };
}
