import { sql, type Kysely } from 'kysely';
import { eventSummaryOf } from '../internal/event-summary.ts';
import type { EventProducer } from '../kafka-port/kafka-client.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { inBatchTransaction } from './batch-transaction.ts';
import { claimBatch, type ClaimedEvent } from './claim-batch.ts';
import type { RelayBatchEvent, RelayOptions } from './relay-options.ts';
import { sendEvents, type Refusal } from './send-events.ts';

export interface PublishDeps {
  readonly db: Kysely<OutboxTables>;
  readonly producer: EventProducer;
  readonly options: RelayOptions;
  readonly metrics?: OutboxMetrics | undefined;
}

/** A row this batch set aside as FAILED. */
export interface FailedEvent {
  readonly id: string;
  readonly eventId: string;
  readonly topic: string;
  readonly partitionKey: string;
  readonly attempts: number;
  readonly reason: string;
}

export interface BatchResult {
  /** Rows claimed (0: nothing to do). */
  readonly claimed: number;
  /** Rows Kafka acknowledged, now marked published. */
  readonly published: number;
  /** Rows set aside as FAILED in this batch; each holds back the later rows of its key. */
  readonly failed: readonly FailedEvent[];
  /** Rows Kafka refused that will be tried again (their attempts counted). */
  readonly retrying: number;
  /** The claim stopped at `batchSize` or `maxBatchBytes`: more rows are waiting. */
  readonly full: boolean;
  /**
   * Kafka failed while refused rows were being pinned down (see send-events.ts); what was
   * known was committed. Undefined when none.
   */
  readonly interruption: unknown;
}

const NOTHING: BatchResult = Object.freeze({
  claimed: 0,
  published: 0,
  failed: Object.freeze([]),
  retrying: 0,
  full: false,
  interruption: undefined,
});

/**
 * One relay step: claim a batch, send it (one request unless Kafka refuses some rows),
 * mark what Kafka acknowledged published and what it refused with the reason (FAILED when it
 * cannot pass or ran out of tries), commit. A Kafka or PostgreSQL failure on the main send
 * rolls everything back; no row is marked published unless Kafka acknowledged it.
 */
export async function publishBatch(deps: PublishDeps): Promise<BatchResult> {
  const { options } = deps;
  const started = performance.now();
  const result = await inBatchTransaction(deps.db, options, async (trx): Promise<BatchResult> => {
    const batch = await claimBatch(trx, options);
    if (batch.events.length === 0) return NOTHING;
    const outcome = await sendEvents(deps.producer, batch.events, {
      maxEventBytes: options.maxEventBytes,
      sendTimeoutMs: options.sendTimeoutMs,
      keepAlive: () => sql`SELECT 1`.execute(trx),
    });
    if (outcome.acked.length > 0) {
      await options.hooks.afterPublish?.(outcome.acked.map(toBatchEvent));
      await markPublished(trx, outcome.acked);
    }
    const failed = await markRefused(trx, outcome.refused, options.maxPublishAttempts);
    return {
      claimed: batch.events.length,
      published: outcome.acked.length,
      failed,
      retrying: outcome.refused.length - failed.length,
      full: batch.full,
      interruption: outcome.interruption,
    };
  });
  if (deps.metrics && result.claimed > 0) {
    if (result.published > 0) {
      deps.metrics.publishedTotal.inc(result.published);
      deps.metrics.batchSize.observe(result.published);
      deps.metrics.batchDurationSeconds.observe((performance.now() - started) / 1000);
    }
    const refused = result.failed.length + result.retrying;
    if (refused > 0) deps.metrics.publishRefusedTotal.inc(refused);
  }
  return result;
}

async function markPublished(
  trx: Kysely<OutboxTables>,
  acked: readonly ClaimedEvent[],
): Promise<void> {
  await trx
    .updateTable('outbox_event')
    .set({ published_at: sql<Date>`now()` })
    .where(sql<boolean>`id = ANY(${acked.map((row) => row.id)}::bigint[])`)
    .execute();
}

/** Counts the refusals; a refusal that cannot pass, or the last allowed one, sets the row aside. */
async function markRefused(
  trx: Kysely<OutboxTables>,
  refused: readonly Refusal[],
  maxPublishAttempts: number,
): Promise<FailedEvent[]> {
  if (refused.length === 0) return [];
  const failsNow = refused.map(
    ({ event, final }) => final || event.publish_attempts + 1 >= maxPublishAttempts,
  );
  await sql`
    UPDATE outbox_event o
    SET publish_attempts = o.publish_attempts + 1,
      last_error = r.reason,
      failed_at = CASE WHEN r.fails THEN now() ELSE o.failed_at END
    FROM unnest(
      ${refused.map(({ event }) => event.id)}::bigint[],
      ${refused.map(({ reason }) => reason)}::text[],
      ${failsNow}::boolean[]
    ) AS r(id, reason, fails)
    WHERE o.id = r.id
  `.execute(trx);
  return refused
    .filter((_, i) => failsNow[i])
    .map(({ event, reason }) => ({
      id: event.id,
      eventId: event.event_id,
      topic: event.topic,
      partitionKey: event.partition_key,
      attempts: event.publish_attempts + 1,
      reason,
    }));
}

function toBatchEvent(row: ClaimedEvent): RelayBatchEvent {
  return { id: row.id, ...eventSummaryOf(row) };
}
