import type { Kysely } from 'kysely';
import {
  DEFAULT_CONSUMER_BACKOFF,
  DEFAULT_MAX_WAIT_TIME_MS,
  DEFAULT_SESSION_TIMEOUT_MS,
} from '../kafka/consumer-settings.ts';
import type { BatchControl, ConsumedBatch, KafkaClient } from '../kafka-port/kafka-client.ts';
import type { ParkItem } from '../kafka/park.ts';
import { parseMessage } from '../kafka/parse-message.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import type { Logger } from '../logger.ts';
import { createInboxNotifier } from '../outbox/commit-notifier.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { ProgressReporter } from '../operations/stall-watch.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { InboxBatchInfo, InboxWriterHooks, InboxWriterOptions } from './inbox-options.ts';
import { storeInboxBatch, type AcceptedMessage } from './store-inbox-batch.ts';

export interface InboxWriterDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: InboxWriterOptions;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: InboxWriterHooks;
}

/**
 * The inbox writer: per Kafka batch, stores the valid events with one
 * `INSERT ... ON CONFLICT (event_id) DO NOTHING` and parks the malformed ones (and those whose
 * data PostgreSQL refuses), commits that transaction, then commits the batch's offset
 * explicitly. A crash anywhere before the offset commit re-delivers the batch; the conflict
 * clause drops the repeats (counted).
 */
export async function startInboxWriter<DB extends OutboxTables>(
  deps: InboxWriterDeps<DB>,
): Promise<Worker> {
  const db = outboxDb(deps.db);
  const { options, logger, metrics } = deps;
  const processors = createInboxNotifier(db, logger);
  const backoff = Object.freeze({ ...DEFAULT_CONSUMER_BACKOFF, ...options.backoff });
  const state = new StateLog(logger, { component: 'inbox-writer', groupId: options.groupId });

  const eachBatch = async (batch: ConsumedBatch, control: BatchControl): Promise<void> => {
    const { topic, partition } = batch;
    const progress = metrics?.stalls.reporter('inbox-writer', `${topic}/${partition}`);
    progress?.hasWork(true);
    try {
      await storeBatch(batch, control, progress);
    } finally {
      progress?.hasWork(false);
    }
  };

  const storeBatch = async (
    batch: ConsumedBatch,
    control: BatchControl,
    progress: ProgressReporter | undefined,
  ): Promise<void> => {
    const last = batch.messages[batch.messages.length - 1];
    if (last === undefined) return;
    const accepted: AcceptedMessage[] = [];
    const parked: ParkItem[] = [];
    for (const message of batch.messages) {
      const parsed = parseMessage(batch.topic, batch.partition, message, options.validate);
      if (parsed.ok)
        accepted.push({ event: parsed.event, message, payloadJson: parsed.payloadJson });
      else
        parked.push({
          topic: batch.topic,
          partition: batch.partition,
          message,
          reason: parsed.reason,
        });
    }
    const info: InboxBatchInfo = {
      topic: batch.topic,
      partition: batch.partition,
      eventIds: accepted.map((item) => item.event.eventId),
    };
    await deps.hooks?.beforeStore?.(info);
    const stored = await retryInPlace(
      () =>
        storeInboxBatch(db, options.groupId, {
          topic: batch.topic,
          partition: batch.partition,
          accepted,
          parked,
        }).catch((error: unknown) => {
          progress?.failed(error);
          throw error;
        }),
      {
        backoff,
        state,
        what: 'inbox writer (database)',
        keepGoing: control.active,
        beat: control.heartbeat,
      },
    ).catch((error: unknown) => {
      // Stopping or rebalanced: leave the offset alone; the partition's next owner re-reads.
      if (error instanceof Abandoned) return undefined;
      throw error;
    });
    if (stored === undefined) return;
    progress?.progressed();
    if (stored.inserted > 0) processors.notify();
    // Counted as soon as the rows are durable: a crash before the offset commit must not lose
    // the count of repeats this batch already dropped.
    const { inserted, refused } = stored;
    metrics?.inboxReceivedTotal.inc(inserted);
    const repeats = accepted.length - refused.length - inserted;
    if (repeats > 0) metrics?.inboxDuplicatesTotal.inc(repeats);
    await deps.hooks?.beforeCommitOffset?.(info);
    // Only now, with the rows durable, may Kafka forget the messages.
    await control.commit(last.offset);
    await control.heartbeat();
    const allParked = [...parked, ...refused];
    if (allParked.length > 0) {
      metrics?.parkedTotal.inc({ consumer: options.groupId }, allParked.length);
      logger.warn(
        {
          component: 'inbox-writer',
          topic: batch.topic,
          partition: batch.partition,
          offsets: allParked.map((p) => p.message.offset),
          reasons: allParked.map((p) => p.reason),
        },
        `parked ${allParked.length} message(s) that cannot be stored as events`,
      );
    }
  };
  const consumer = await deps.kafka.startConsumer({
    name: 'inbox writer',
    groupId: options.groupId,
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    sessionTimeoutMs: options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: options.rebalanceTimeoutMs,
    maxWaitTimeMs: options.maxWaitTimeMs ?? DEFAULT_MAX_WAIT_TIME_MS,
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
    logger,
    backoff,
    eachBatch,
    membership: metrics?.stalls.reporter('inbox-writer', 'group membership'),
  });
  const unwatchLag = metrics?.consumerLag.watch(deps.kafka, options.groupId, options.topics);
  return {
    async stop() {
      await consumer.stop();
      await unwatchLag?.();
      await processors.idle();
    },
  };
}
