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
import { outboxDb, outboxTrx } from '../internal/views.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { ProgressReporter } from '../operations/stall-watch.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, type EventSpan } from '../trace/spans.ts';
import type { Worker } from '../worker.ts';
import type { DedupConsumerHooks, DedupConsumerOptions } from './dedup-options.ts';
import { recordProcessedEvents } from './record-processed-events.ts';

interface DedupConsumerBase<DB extends OutboxTables> {
  readonly db: Kysely<DB>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics?: OutboxMetrics;
  readonly options: DedupConsumerOptions;
  /** Fault-injection moments of the e2e suite; none in a deployment. */
  readonly hooks?: DedupConsumerHooks;
}

/**
 * The effect, in one of two forms. Both run in the transaction that writes the events'
 * `processed_event` rows, and see only first deliveries (repeats are dropped before), in offset
 * order. `handle`, one event at a time, is the simple form to start with; `handleBatch` gets a
 * fetch's new events at once, so an effect can be written with a constant number of statements.
 */
export type DedupEffect<DB extends OutboxTables> =
  | {
      /** The effect of one event. */
      readonly handle: (trx: Transaction<DB>, event: ReceivedEvent) => Promise<void>;
      readonly handleBatch?: undefined;
    }
  | {
      /**
       * The effect of a set of events, to be applied in the order given (several events of one
       * key may be in it). When it throws, the set is rolled back and split in halves, each
       * applied on its own, until the failing event is alone: so it must not depend on which
       * events share its call.
       */
      readonly handleBatch: (
        trx: Transaction<DB>,
        events: readonly ReceivedEvent[],
      ) => Promise<void>;
      readonly handle?: undefined;
    };

export type DedupConsumerDeps<DB extends OutboxTables> = DedupConsumerBase<DB> & DedupEffect<DB>;

const DEFAULT_MAX_ATTEMPTS = 5;

/** What became of an event of a fetch. */
type Outcome = 'applied' | 'duplicate' | 'parked';

/** A parsed event of the fetch, with its message and the span of its apply. */
interface FetchedEvent {
  readonly message: ConsumedMessage;
  readonly event: ReceivedEvent;
  readonly span: EventSpan;
  ended: boolean;
}

/**
 * The dedup consumer, per fetch: the parsed events of a partition's batch are applied in ONE
 * transaction, `processed_event` rows by one set-based INSERT, then the effects of the events
 * that are new, in offset order; the offset is committed once, after the batch. A set that fails
 * is rolled back and split in halves, left half first (so each key stays in order), until the
 * failing event is alone: that one is retried, and parked after `maxAttempts` handler failures
 * with PostgreSQL up, or at once when PostgreSQL refuses its data. Malformed messages are parked;
 * while PostgreSQL is down the partition waits and retries the whole set.
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

  /** The effects of the new events of a set, in order, each in its event's trace context. */
  const runEffects = async (trx: Transaction<DB>, fresh: readonly FetchedEvent[]) => {
    if (fresh.length === 0) return;
    if (deps.handleBatch !== undefined) {
      await deps.handleBatch(
        trx,
        fresh.map((item) => item.event),
      );
      return;
    }
    for (const item of fresh) await item.span.activate(() => deps.handle(trx, item.event));
  };

  /** One transaction: the set's processed_event rows, then the effects of the new events. */
  const applySet = (items: readonly FetchedEvent[]): Promise<Outcome[]> =>
    deps.db.transaction().execute(async (trx) => {
      const isNew = await recordProcessedEvents(
        outboxTrx(trx),
        consumerName,
        items.map((item) => item.event.eventId),
      );
      await runEffects(
        trx,
        items.filter((_, i) => isNew[i] === true),
      );
      return isNew.map((fresh): Outcome => (fresh ? 'applied' : 'duplicate'));
    });

  /** Ends each event's span with its outcome, counts it, and runs the afterApply hook. */
  const settle = async (items: readonly FetchedEvent[], outcomes: readonly Outcome[]) => {
    for (const [i, item] of items.entries()) {
      const outcome = outcomes[i] ?? 'parked';
      if (outcome === 'duplicate') item.span.markDuplicate();
      item.span.end(outcome === 'parked' ? 'parked' : undefined);
      item.ended = true;
      if (outcome === 'applied') metrics?.dedupAppliedTotal.inc(labels);
      if (outcome === 'duplicate') metrics?.dedupDuplicatesTotal.inc(labels);
    }
    for (const [i, item] of items.entries()) {
      if (outcomes[i] === 'applied')
        await deps.hooks?.afterApply?.({
          eventId: item.event.eventId,
          eventType: item.event.eventType,
        });
    }
  };

  /**
   * Applies a set of consecutive events of the partition, retrying; returns once each is
   * applied, a duplicate, or parked. `done` is told the last offset of every part settled, in
   * offset order.
   */
  const applyOrSplit = async (
    work: ActiveBatch,
    items: readonly FetchedEvent[],
    done: (offset: string) => void,
  ): Promise<void> => {
    const last = items[items.length - 1];
    if (last === undefined) return;
    let handlerFailures = 0;
    for (let attempt = 1; ; attempt++) {
      if (!keepGoing(work)) throw new Abandoned();
      let outcomes: Outcome[];
      try {
        outcomes = await applySet(items);
      } catch (error) {
        const [only] = items;
        // PostgreSQL refused some event's data (a NUL in a text column...): the same data
        // fails the same way every time, so the set is split now, and the event parked alone.
        const refusal = dataErrorOf(error);
        if (refusal !== undefined && only !== undefined && items.length === 1) {
          await park(work, only.message, refusedDataReason(refusal));
          await settle(items, ['parked']);
          done(last.message.offset);
          return;
        }
        // Only failures with the database reachable count towards parking, or split a set: an
        // outage must not push good messages into the parking lot, nor apply them one by one.
        const databaseUp =
          refusal !== undefined ||
          (await sql`SELECT 1`.execute(db).then(
            () => true,
            () => false,
          ));
        if (databaseUp && items.length > 1) {
          const middle = Math.ceil(items.length / 2);
          await applyOrSplit(work, items.slice(0, middle), done);
          await applyOrSplit(work, items.slice(middle), done);
          return;
        }
        if (databaseUp) handlerFailures += 1;
        state.failed('dedup consumer', error);
        work.progress?.failed(error);
        if (only !== undefined && handlerFailures >= maxAttempts) {
          await park(
            work,
            only.message,
            `handler failed ${handlerFailures} times: ${describe(error)}`,
          );
          await settle(items, ['parked']);
          done(last.message.offset);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(backoff, attempt)));
        continue;
      }
      state.ok('dedup consumer');
      await settle(items, outcomes);
      done(last.message.offset);
      return;
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
    const done = (offset: string): void => {
      lastDone = offset;
      work.progress?.progressed();
    };
    // The parsed events since the last malformed message: applied together, before it is parked.
    let run: FetchedEvent[] = [];
    const started: FetchedEvent[] = [];
    try {
      for (const message of batch.messages) {
        if (!keepGoing(work)) break;
        const parsed = parseMessage(batch.topic, batch.partition, message, options.validate);
        if (parsed.ok) {
          const item = {
            message,
            event: parsed.event,
            span: applySpan(parsed.event),
            ended: false,
          };
          run.push(item);
          started.push(item);
          continue;
        }
        await applyOrSplit(work, run, done);
        run = [];
        await park(work, message, parsed.reason);
        done(message.offset);
      }
      await applyOrSplit(work, run, done);
    } catch (error) {
      for (const item of started) if (!item.ended) item.span.end(error);
      if (!(error instanceof Abandoned)) throw error;
    } finally {
      work.progress?.hasWork(false);
    }
    // What is done stays done, also when the group moved on mid-batch.
    if (lastDone !== undefined) await control.commit(lastDone);
  };

  /** The span of an event's apply: it continues the trace its message carries. */
  const applySpan = (event: ReceivedEvent): EventSpan =>
    startEventSpan({
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

  const consumer = await deps.kafka.startConsumer({
    name: 'dedup consumer',
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
    membership: metrics?.stalls.reporter('dedup-consumer', 'group membership'),
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
