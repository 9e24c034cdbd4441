import type { BackoffOptions } from '../internal/backoff.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { StateLog } from '../internal/state-log.ts';
import { outboxDb } from '../internal/views.ts';
import type { ParkItem } from '../receive/park.ts';
import { parseMessage } from '../receive/parse-message.ts';
import type { BatchControl, ConsumedBatch } from '../kafka-port/kafka-client.ts';
import type { CommitNotifier } from '../enqueue/commit-notifier.ts';
import type { ProgressReporter } from '../worker.ts';
import type { OutboxTables } from '../schema/tables.ts';
import type { InboxBatchInfo } from './writer-options.ts';
import type { InboxWriterDeps } from './writer-deps.ts';
import { storeInboxBatch, type AcceptedMessage } from './store-inbox-batch.ts';

/** A batch's messages: the events to store, and what cannot be stored as one. */
interface SortedBatch {
  readonly accepted: AcceptedMessage[];
  readonly parked: ParkItem[];
}

/**
 * The inbox writer's work on one Kafka batch: store the valid events with one
 * `INSERT ... ON CONFLICT (event_id) DO NOTHING` and park the malformed ones (and those whose
 * data PostgreSQL refuses), commit that transaction, then commit the batch's offset
 * explicitly. A crash anywhere before the offset commit re-delivers the batch; the conflict
 * clause drops the repeats (counted).
 */
export class InboxBatchWriter<DB extends OutboxTables> {
  readonly #deps: InboxWriterDeps<DB>;
  readonly #backoff: BackoffOptions;
  readonly #processors: CommitNotifier;
  readonly #state: StateLog;

  constructor(deps: InboxWriterDeps<DB>, backoff: BackoffOptions, processors: CommitNotifier) {
    this.#deps = deps;
    this.#backoff = backoff;
    this.#processors = processors;
    const context = { component: 'inbox-writer', groupId: deps.options.groupId };
    this.#state = new StateLog(deps.logger, context);
  }

  async writeBatch(batch: ConsumedBatch, control: BatchControl): Promise<void> {
    const unit = `${batch.topic}/${batch.partition}`;
    const progress = this.#deps.metrics?.stalls.reporter('inbox-writer', unit);
    progress?.hasWork(true);
    try {
      await this.#store(batch, control, progress);
    } finally {
      progress?.hasWork(false);
    }
  }

  async #store(
    batch: ConsumedBatch,
    control: BatchControl,
    progress: ProgressReporter | undefined,
  ): Promise<void> {
    const deps = this.#deps;
    const last = batch.messages.at(-1);
    if (last === undefined) return;
    const { accepted, parked } = this.#sort(batch);
    const info: InboxBatchInfo = {
      topic: batch.topic,
      partition: batch.partition,
      eventIds: accepted.map((item) => item.event.eventId),
    };
    await deps.hooks?.beforeStore?.(info);
    const stored = await retryInPlace(
      () =>
        storeInboxBatch(outboxDb(deps.db), deps.options.groupId, {
          topic: batch.topic,
          partition: batch.partition,
          accepted,
          parked,
        }).catch((error: unknown) => {
          progress?.failed(error);
          throw error;
        }),
      {
        backoff: this.#backoff,
        state: this.#state,
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
    if (stored.inserted > 0) this.#processors.notify();
    // Counted as soon as the rows are durable: a crash before the offset commit must not lose
    // the count of repeats this batch already dropped.
    deps.metrics?.inboxReceivedTotal.inc(stored.inserted);
    const repeats = accepted.length - stored.refused.length - stored.inserted;
    if (repeats > 0) deps.metrics?.inboxDuplicatesTotal.inc(repeats);
    await deps.hooks?.beforeCommitOffset?.(info);
    // Only now, with the rows durable, may Kafka forget the messages.
    await control.commit(last.offset);
    await control.heartbeat();
    this.#reportParked(batch, [...parked, ...stored.refused]);
  }

  #sort(batch: ConsumedBatch): SortedBatch {
    const sorted: SortedBatch = { accepted: [], parked: [] };
    const { topic, partition } = batch;
    for (const message of batch.messages) {
      const parsed = parseMessage(topic, partition, message, this.#deps.options.validate);
      if (parsed.ok)
        sorted.accepted.push({ event: parsed.event, message, payloadJson: parsed.payloadJson });
      else sorted.parked.push({ topic, partition, message, reason: parsed.reason });
    }
    return sorted;
  }

  #reportParked(batch: ConsumedBatch, parked: readonly ParkItem[]): void {
    if (parked.length === 0) return;
    this.#deps.metrics?.parkedTotal.inc({ consumer: this.#deps.options.groupId }, parked.length);
    this.#deps.logger.warn(
      {
        component: 'inbox-writer',
        topic: batch.topic,
        partition: batch.partition,
        offsets: parked.map((p) => p.message.offset),
        reasons: parked.map((p) => p.reason),
      },
      `parked ${parked.length} message(s) that cannot be stored as events`,
    );
  }
}
