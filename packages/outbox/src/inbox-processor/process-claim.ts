import type { StepOutcome, WorkerLoops } from '../internal/worker-loop.ts';
import type { CommitNotifier } from '../enqueue/commit-notifier.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { InboxRow } from './claim-inbox-rows.ts';
import { handleClaimedRows, WriteNotStarted, type ClaimedRowsDeps } from './handle-claimed-rows.ts';
import type { OwedAttempts } from './owed-attempts.ts';
import { reportRowOutcome, type OutcomeReport } from './report-row-outcome.ts';

/** One worker of the inbox processor, and what it shares with the others. */
export interface ClaimWorker<DB extends OutboxTables> {
  readonly rows: ClaimedRowsDeps<DB>;
  readonly owed: OwedAttempts;
  readonly loops: WorkerLoops;
  readonly report: OutcomeReport;
  readonly relayNotifier: CommitNotifier | undefined;
  /** NOTIFYs heard so far by the processor. */
  readonly notices: () => number;
}

/** Runs the claimed rows' handlers and reports each outcome. */
async function handleOpenRows<DB extends OutboxTables>(
  worker: ClaimWorker<DB>,
  open: readonly InboxRow[],
): Promise<void> {
  let handled: Awaited<ReturnType<typeof handleClaimedRows>>;
  try {
    handled = await handleClaimedRows(worker.rows, open);
  } catch (error) {
    if (error instanceof WriteNotStarted) {
      worker.owed.owe(
        error.untried.map((row) => ({ eventId: row.event_id, attempts: row.attempts })),
      );
    }
    throw error;
  }
  for (const { row, outcome } of handled) reportRowOutcome(worker.report, row, outcome);
  if (handled.some(({ outcome }) => outcome.kind === 'processed')) worker.relayNotifier?.notify();
}

/**
 * One claim and its rows' attempts. Another claim at once when it may find work now: the claim
 * left due rows, or one of its keys goes on, or a NOTIFY came in meanwhile (the new row may be
 * a later row of a key this worker held, which no idle worker could claim). Otherwise the
 * worker waits for a NOTIFY or the poll, so a row on its own costs one claim, not three.
 */
export async function processClaim<DB extends OutboxTables>(
  worker: ClaimWorker<DB>,
): Promise<StepOutcome> {
  const heard = worker.notices();
  const { options } = worker.rows;
  const claimed = await worker.owed.claim({
    limit: options.batchSize,
    maxAttempts: options.maxAttempts,
    leaseMs: options.handlerTimeoutMs,
  });
  worker.report.progress?.hasWork(claimed.rows.length > 0);
  if (claimed.rows.length === 0) return { next: 'wait' };
  // The next idle worker takes what this claim left while this one handles its rows.
  if (claimed.headsLeft) worker.loops.wakeOne();
  // A row the claim gave up on is dead already: nothing left to run or to write.
  const open = claimed.rows.filter((row) => !row.gave_up);
  for (const row of claimed.rows.filter((candidate) => candidate.gave_up)) {
    reportRowOutcome(worker.report, row, { kind: 'dead', reason: 'its attempts never finished' });
  }
  if (open.length === 0) return { next: 'step' };
  await handleOpenRows(worker, open);
  const again = claimed.headsLeft || claimed.keysContinue || worker.notices() !== heard;
  return again ? { next: 'step' } : { next: 'wait' };
}
