import type { Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { RetentionOptions } from './retention.ts';
import { runRetentionExclusively } from './retention-lock.ts';
import type { RetentionMetrics } from './retention-metrics.ts';

export interface RetentionJobDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly logger: Logger;
  readonly metrics: RetentionMetrics;
  /** Time between the end of one run and the start of the next. */
  readonly intervalMs: number;
  readonly retention: RetentionOptions;
}

/**
 * Runs retention at start, then every `intervalMs`, under the retention lock: however many
 * instances run, one deletes at a time and the others count `locked_elsewhere`. A failed run
 * (PostgreSQL away) is logged and counted, and the next one comes at the next interval.
 * `stop()` lets the current batch finish, then returns.
 */
export function startRetentionJob<DB extends OutboxTables>(deps: RetentionJobDeps<DB>): Worker {
  if (!(Number.isInteger(deps.intervalMs) && deps.intervalMs >= 1)) {
    throw new OutboxError(
      'INVALID_OPTIONS',
      `intervalMs must be at least 1 (got ${deps.intervalMs})`,
    );
  }
  const wakeup = new Wakeup();
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      await runOnce(deps);
      if (!stopping) await wakeup.wait(deps.intervalMs);
    }
  })();
  return {
    async stop() {
      stopping = true;
      wakeup.wake();
      await loop;
    },
  };
}

async function runOnce<DB extends OutboxTables>(deps: RetentionJobDeps<DB>): Promise<void> {
  const { metrics, logger } = deps;
  const started = performance.now();
  try {
    const result = await runRetentionExclusively(deps.db, deps.retention);
    if (result === undefined) {
      metrics.runsTotal.inc({ outcome: 'locked_elsewhere' });
      logger.debug({}, 'retention: another instance holds the lock; skipped this run');
      return;
    }
    for (const [table, deleted] of Object.entries(result.byTable)) {
      metrics.deletedTotal.inc({ table }, deleted);
    }
    const seconds = (performance.now() - started) / 1000;
    metrics.runsTotal.inc({ outcome: 'completed' });
    metrics.lastRunTimestamp.set(Date.now() / 1000);
    metrics.lastRunDurationSeconds.set(seconds);
    const total = Object.values(result.byTable).reduce((sum, n) => sum + n, 0);
    // A run that found nothing is the common case: keep it out of the info log.
    (total > 0 ? logger.info : logger.debug).call(
      logger,
      { deleted: result.byTable, seconds },
      'retention run completed',
    );
  } catch (error) {
    metrics.runsTotal.inc({ outcome: 'failed' });
    logger.error({ err: error }, 'retention run failed; trying again at the next interval');
  }
}
