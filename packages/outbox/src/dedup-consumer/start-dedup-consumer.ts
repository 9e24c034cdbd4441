import { sql, type Kysely, type Transaction } from 'kysely';
import {
  DEFAULT_CONSUMER_BACKOFF,
  DEFAULT_MAX_WAIT_TIME_MS,
  DEFAULT_SESSION_TIMEOUT_MS,
} from '../kafka/consumer-settings.ts';
import { parkMessages } from '../kafka/park.ts';
import { parseMessage } from '../kafka/parse-message.ts';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import type {
  BatchControl,
  ConsumedBatch,
  ConsumedMessage,
  KafkaClient,
} from '../kafka-port/kafka-client.ts';
import { backoffDelay } from '../internal/backoff.ts';
import { dataErrorOf, refusedDataReason } from '../internal/data-error.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { describe, StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { ProgressReporter } from '../operations/stall-watch.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan } from '../trace/spans.ts';
import type { Worker } from '../worker.ts';
import type { DedupConsumerHooks, DedupConsumerOptions } from './dedup-options.ts';
import { applyOnce } from './apply-once.ts';

export interface DedupConsumerDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: DedupConsumerOptions;
  /** The effect; runs in the transaction that also writes the processed_event row. */
  readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: DedupConsumerHooks;
}

const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * The dedup consumer: each message, in partition order, in its own transaction via
 * `applyOnce`; offsets committed explicitly after the batch. Malformed messages, messages whose
 * data PostgreSQL refuses (at once) and messages whose handler keeps failing (with PostgreSQL
 * up) are parked, never block the partition; while PostgreSQL is down the partition waits and
 * retries.
 */
export async function startDedupConsumer<DB extends OutboxTables>(
  deps: DedupConsumerDeps<DB>,
): Promise<Worker> {
  const { options, logger, metrics } = deps;
  const db = outboxDb(deps.db);
  const consumerName = options.consumerName;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoff = Object.freeze({ ...DEFAULT_CONSUMER_BACKOFF, ...options.backoff });
  const state = new StateLog(logger, { component: 'dedup-consumer', consumer: consumerName });
  const labels = { consumer: consumerName };

  const park = async (
    work: ActiveBatch,
    message: ConsumedMessage,
    reason: string,
  ): Promise<void> => {
    const { topic, partition } = work.batch;
    await retryInPlace(
      () =>
        db
          .transaction()
          .execute((trx) =>
            parkMessages(trx, consumerName, [{ topic, partition, message, reason }]),
          )
          .catch((error: unknown) => {
            work.progress?.failed(error);
            throw error;
          }),
      {
        backoff,
        state,
        what: 'dedup consumer (parking)',
        keepGoing: () => keepGoing(work),
        beat: work.control.heartbeat,
      },
    );
    metrics?.parkedTotal.inc(labels);
    logger.warn(
      { component: 'dedup-consumer', topic, partition, offset: message.offset, reason },
      'message parked',
    );
  };

  /** Applies one event in a span that continues its trace; a repeat is marked duplicate. */
  const apply = async (
    work: ActiveBatch,
    message: ConsumedMessage,
    event: ReceivedEvent,
  ): Promise<void> => {
    const span = startEventSpan({
      operation: 'apply',
      topic: event.topic,
      eventId: event.eventId,
      eventType: event.eventType,
      partitionKey: event.partitionKey,
      headers: event.headers,
      consumerGroup: options.groupId,
      partition: event.partition,
      offset: event.offset,
    });
    try {
      const outcome = await span.activate(() => applyOrPark(work, message, event));
      if (outcome === 'duplicate') span.markDuplicate();
      span.end(outcome === 'parked' ? 'parked' : undefined);
    } catch (error) {
      span.end(error);
      throw error;
    }
  };

  /** Applies one event, retrying; returns once it is applied, a duplicate, or parked. */
  const applyOrPark = async (
    work: ActiveBatch,
    message: ConsumedMessage,
    event: ReceivedEvent,
  ): Promise<'applied' | 'duplicate' | 'parked'> => {
    let handlerFailures = 0;
    for (let attempt = 1; ; attempt++) {
      if (!keepGoing(work)) throw new Abandoned();
      let applied: boolean;
      try {
        applied = await deps.db
          .transaction()
          .execute((trx) =>
            applyOnce(trx, consumerName, event.eventId, () => deps.handle(trx, event)),
          );
      } catch (error) {
        // PostgreSQL refused the event's data (a NUL in a text column...): the same data
        // fails the same way every time, so it is parked now, not after maxAttempts.
        const refusal = dataErrorOf(error);
        if (refusal !== undefined) {
          await park(work, message, refusedDataReason(refusal));
          return 'parked';
        }
        // Only failures with the database reachable count towards parking: an outage must
        // not push good messages into the parking lot.
        const databaseUp = await sql`SELECT 1`.execute(db).then(
          () => true,
          () => false,
        );
        if (databaseUp) handlerFailures += 1;
        state.failed('dedup consumer', error);
        work.progress?.failed(error);
        if (handlerFailures >= maxAttempts) {
          await park(work, message, `handler failed ${handlerFailures} times: ${describe(error)}`);
          return 'parked';
        }
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(backoff, attempt)));
        continue;
      }
      (applied ? metrics?.dedupAppliedTotal : metrics?.dedupDuplicatesTotal)?.inc(labels);
      state.ok('dedup consumer');
      if (applied)
        await deps.hooks?.afterApply?.({ eventId: event.eventId, eventType: event.eventType });
      return applied ? 'applied' : 'duplicate';
    }
  };

  const eachBatch = async (batch: ConsumedBatch, control: BatchControl): Promise<void> => {
    const work: ActiveBatch = {
      batch,
      control,
      progress: metrics?.stalls.reporter('dedup-consumer', `${batch.topic}/${batch.partition}`),
    };
    work.progress?.hasWork(true);
    let lastDone: string | undefined;
    try {
      for (const message of batch.messages) {
        if (!keepGoing(work)) break;
        const parsed = parseMessage(batch.topic, batch.partition, message, options.validate);
        if (parsed.ok) await apply(work, message, parsed.event);
        else await park(work, message, parsed.reason);
        lastDone = message.offset;
        work.progress?.progressed();
      }
    } catch (error) {
      if (!(error instanceof Abandoned)) throw error;
    } finally {
      work.progress?.hasWork(false);
    }
    // What is done stays done, also when the group moved on mid-batch.
    if (lastDone !== undefined) await control.commit(lastDone);
  };

  const consumer = await deps.kafka.startConsumer({
    name: 'dedup consumer',
    groupId: options.groupId,
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    sessionTimeoutMs: options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
    maxWaitTimeMs: options.maxWaitTimeMs ?? DEFAULT_MAX_WAIT_TIME_MS,
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
    logger,
    backoff,
    eachBatch,
  });
  const unwatchLag = metrics?.consumerLag.watch(deps.kafka, options.groupId, options.topics);
  return {
    async stop() {
      await consumer.stop();
      await unwatchLag?.();
    },
  };
}

/** A batch being handled, with the control that tells whether this member still owns it. */
interface ActiveBatch {
  readonly batch: ConsumedBatch;
  readonly control: BatchControl;
  readonly progress: ProgressReporter | undefined;
}

function keepGoing(work: ActiveBatch): boolean {
  return work.control.active();
}
