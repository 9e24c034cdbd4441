import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import { commitOffset } from '../kafka/commit-offset.ts';
import {
  consumerConfig,
  DEFAULT_CONSUMER_BACKOFF,
  superviseConsumer,
} from '../kafka/supervise-consumer.ts';
import { parkMessages, type ParkItem } from '../kafka/park.ts';
import { parseMessage } from '../kafka/parse-message.ts';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import { INBOX_CHANNEL } from '../outbox/channels.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { Worker } from '../worker.ts';
import type { InboxWriterOptions } from './inbox-options.ts';
import { insertInboxEvents } from './insert-inbox-events.ts';

export interface InboxWriterDeps<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: Kafka;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: InboxWriterOptions;
}

/**
 * The inbox writer: per Kafka batch, stores the valid events with one
 * `INSERT ... ON CONFLICT (event_id) DO NOTHING` and parks the malformed ones, commits that
 * transaction, then commits the batch's offset explicitly. A crash anywhere before the offset
 * commit re-delivers the batch; the conflict clause drops the repeats (counted).
 */
export async function startInboxWriter<DB extends OutboxTables>(
  deps: InboxWriterDeps<DB>,
): Promise<Worker> {
  const db = outboxDb(deps.db);
  const { options, logger, metrics } = deps;
  const backoff = Object.freeze({ ...DEFAULT_CONSUMER_BACKOFF, ...options.backoff });
  const state = new StateLog(logger, { component: 'inbox-writer', groupId: options.groupId });

  const eachBatch = async (consumer: Consumer, payload: EachBatchPayload): Promise<void> => {
    const { batch } = payload;
    const last = batch.messages[batch.messages.length - 1];
    if (last === undefined) return;
    const accepted: ReceivedEvent[] = [];
    const parked: ParkItem[] = [];
    for (const message of batch.messages) {
      const parsed = parseMessage(batch.topic, batch.partition, message, options.validate);
      if (parsed.ok) accepted.push(parsed.event);
      else
        parked.push({
          topic: batch.topic,
          partition: batch.partition,
          message,
          reason: parsed.reason,
        });
    }
    const inserted = await retryInPlace(
      () =>
        db.transaction().execute(async (trx) => {
          const count = await insertInboxEvents(trx, options.groupId, accepted);
          await parkMessages(trx, options.groupId, parked);
          if (count > 0) await sql`SELECT pg_notify(${INBOX_CHANNEL}, '')`.execute(trx);
          return count;
        }),
      {
        backoff,
        state,
        what: 'inbox writer (database)',
        keepGoing: () => payload.isRunning() && !payload.isStale(),
        beat: payload.heartbeat,
      },
    ).catch((error: unknown) => {
      // Stopping or rebalanced: leave the offset alone; the partition's next owner re-reads.
      if (error instanceof Abandoned) return undefined;
      throw error;
    });
    if (inserted === undefined) return;
    // Only now, with the rows durable, may Kafka forget the messages.
    await commitOffset(consumer, logger, {
      topic: batch.topic,
      partition: batch.partition,
      lastOffset: last.offset,
    });
    payload.resolveOffset(last.offset);
    await payload.heartbeat();
    metrics?.inboxReceivedTotal.inc(inserted);
    if (accepted.length > inserted) metrics?.inboxDuplicatesTotal.inc(accepted.length - inserted);
    if (parked.length > 0) {
      metrics?.parkedTotal.inc({ consumer: options.groupId }, parked.length);
      logger.warn(
        {
          component: 'inbox-writer',
          topic: batch.topic,
          partition: batch.partition,
          reasons: parked.map((p) => p.reason),
        },
        `parked ${parked.length} malformed message(s)`,
      );
    }
  };
  return superviseConsumer({
    kafka: deps.kafka,
    name: 'inbox writer',
    config: consumerConfig(options),
    topics: options.topics,
    fromBeginning: options.fromBeginning ?? true,
    logger,
    backoff,
    run: (consumer) =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 3,
        eachBatch: (payload) => eachBatch(consumer, payload),
      }),
  });
}
