import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { ProgressReporter } from '../worker.ts';
import type { InboxRow } from './claim-inbox-rows.ts';
import type { RowOutcome } from './handle-claimed-rows.ts';

export interface OutcomeReport {
  readonly logger: Logger;
  readonly metrics: OutboxMetrics | undefined;
  readonly progress: ProgressReporter | undefined;
  readonly maxAttempts: number;
}

/** What became of a claimed row, in the metrics, the stall watch and the log. */
export function reportRowOutcome(to: OutcomeReport, row: InboxRow, outcome: RowOutcome): void {
  const { logger, metrics, progress } = to;
  const fields = {
    component: 'inbox-processor',
    eventId: row.event_id,
    eventType: row.event_type,
    attempts: row.attempts,
  };
  switch (outcome.kind) {
    case 'processed':
      metrics?.inboxProcessedTotal.inc();
      progress?.progressed();
      return;
    case 'lost':
      metrics?.inboxAttemptsLostTotal.inc();
      logger.warn(
        fields,
        'inbox row was claimed again or finished while this attempt ran past its lease; this attempt is dropped',
      );
      return;
    case 'failed':
      metrics?.inboxHandlerFailuresTotal.inc();
      progress?.failed(outcome.cause);
      logger.warn(
        { ...fields, err: outcome.cause },
        `inbox handler failed (attempt ${row.attempts} of ${to.maxAttempts}); will retry`,
      );
      return;
    case 'dead':
      if (outcome.cause !== undefined) {
        metrics?.inboxHandlerFailuresTotal.inc();
        progress?.failed(outcome.cause);
      }
      metrics?.inboxDeadTotal.inc();
      progress?.progressed();
      logger.error(
        { ...fields, key: row.partition_key, reason: outcome.reason },
        `inbox row marked dead; later events of key ${row.partition_key} wait for an operator (requeue or discard)`,
      );
  }
}
