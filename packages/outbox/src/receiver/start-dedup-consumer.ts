import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { sql, type Kysely, type Transaction } from 'kysely';
import { commitOffset } from '../kafka/commit-offset.ts';
import { parkMessages } from '../kafka/park.ts';
import { parseMessage } from '../kafka/parse-message.ts';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import {
  consumerConfig,
  DEFAULT_CONSUMER_BACKOFF,
  superviseConsumer,
} from '../kafka/supervise-consumer.ts';
import { backoffDelay } from '../internal/backoff.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { describe, StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { DedupConsumerOptions } from './dedup-options.ts';
import { runOnce } from './run-once.ts';

export interface DedupConsumerDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: DedupConsumerOptions;
  /** The effect; runs in the transaction that also writes the processed_event row. */
  readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
}

const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * The default receiver as a consumer: each message, in partition order, in its own
 * transaction via `runOnce`; offsets committed explicitly after the batch. Malformed messages
 * and messages whose handler keeps failing (with PostgreSQL up) are parked, never block the
 * partition; while PostgreSQL is down the partition waits and retries.
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
    payload: EachBatchPayload,
    message: KafkaMessage,
    reason: string,
  ): Promise<void> => {
    const { topic, partition } = payload.batch;
    await retryInPlace(
      () =>
        db
          .transaction()
          .execute((trx) =>
            parkMessages(trx, consumerName, [{ topic, partition, message, reason }]),
          ),
      {
        backoff,
        state,
        what: 'dedup consumer (parking)',
        keepGoing: () => keepGoing(payload),
        beat: payload.heartbeat,
      },
    );
    metrics?.parkedTotal.inc(labels);
    logger.warn(
      { component: 'dedup-consumer', topic, partition, offset: message.offset, reason },
      'message parked',
    );
  };

  /** Applies one event; returns once it is applied, a duplicate, or parked. */
  const apply = async (
    payload: EachBatchPayload,
    message: KafkaMessage,
    event: ReceivedEvent,
  ): Promise<void> => {
    let handlerFailures = 0;
    for (let attempt = 1; ; attempt++) {
      if (!keepGoing(payload)) throw new Abandoned();
      try {
        const applied = await deps.db
          .transaction()
          .execute((trx) =>
            runOnce(trx, consumerName, event.eventId, () => deps.handle(trx, event)),
          );
        (applied ? metrics?.dedupAppliedTotal : metrics?.dedupDuplicatesTotal)?.inc(labels);
        state.ok('dedup consumer');
        return;
      } catch (error) {
        // Only failures with the database reachable count towards parking: an outage must
        // not push good messages into the parking lot.
        const databaseUp = await sql`SELECT 1`.execute(db).then(
          () => true,
          () => false,
        );
        if (databaseUp) handlerFailures += 1;
        state.failed('dedup consumer', error);
        if (handlerFailures >= maxAttempts) {
          await park(
            payload,
            message,
            `handler failed ${handlerFailures} times: ${describe(error)}`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(backoff, attempt)));
        await payload.heartbeat().catch(() => undefined);
      }
    }
  };

  const eachBatch = async (consumer: Consumer, payload: EachBatchPayload): Promise<void> => {
    const { batch } = payload;
    let lastDone: string | undefined;
    try {
      for (const message of batch.messages) {
        if (!keepGoing(payload)) break;
        const parsed = parseMessage(batch.topic, batch.partition, message, options.validate);
        if (parsed.ok) await apply(payload, message, parsed.event);
        else await park(payload, message, parsed.reason);
        payload.resolveOffset(message.offset);
        lastDone = message.offset;
        await payload.heartbeat();
      }
    } catch (error) {
      if (!(error instanceof Abandoned)) throw error;
    }
    if (lastDone !== undefined) {
      await commitOffset(consumer, logger, {
        topic: batch.topic,
        partition: batch.partition,
        lastOffset: lastDone,
      });
    }
  };

  return superviseConsumer({
    kafka: deps.kafka,
    name: 'dedup consumer',
    config: consumerConfig(options),
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    logger,
    backoff,
    run: (consumer) =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => eachBatch(consumer, payload),
      }),
  });
}

function keepGoing(payload: EachBatchPayload): boolean {
  return payload.isRunning() && !payload.isStale();
}
