import { sql, type Kysely, type Transaction } from 'kysely';
import { parkMessages } from '../receive/park.ts';
import { parseMessage } from '../receive/parse-message.ts';
import type { ReceivedEvent } from '../receive/received-event.ts';
import type { BatchControl, ConsumedBatch, ConsumedMessage } from '../kafka-port/kafka-client.ts';
import { backoffDelay, type BackoffOptions } from '../internal/backoff.ts';
import { dataErrorOf, refusedDataReason } from '../internal/data-error.ts';
import { Abandoned, retryInPlace } from '../internal/retry-in-place.ts';
import { describe, StateLog } from '../internal/state-log.ts';
import { outboxDb, outboxTrx } from '../internal/views.ts';
import type { ProgressReporter } from '../worker.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, type EventSpan } from '../trace/spans.ts';
import { recordProcessedEvents } from './record-processed-events.ts';
import type { DedupConsumerDeps } from './dedup-deps.ts';

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

/** A batch being handled, with the control that tells whether this member still owns it. */
interface ActiveBatch {
  readonly batch: ConsumedBatch;
  readonly control: BatchControl;
  readonly progress: ProgressReporter | undefined;
  /** Tells the batch the last offset of a part that is settled, in offset order. */
  readonly done: (offset: string) => void;
}

/**
 * The dedup consumer's work on one fetch (a partition's batch): the parsed events are applied
 * in ONE transaction, `processed_event` rows by one set-based INSERT, then the effects of the
 * events that are new, in offset order; the offset is committed once, after the batch. A set
 * that fails is rolled back and split in halves, left half first (so each key stays in order),
 * until the failing event is alone: that one is retried, and parked after `maxAttempts` handler
 * failures with PostgreSQL up, or at once when PostgreSQL refuses its data. Malformed messages
 * are parked; while PostgreSQL is down the partition waits and retries the whole set.
 */
export class FetchApplier<DB extends OutboxTables> {
  readonly #deps: DedupConsumerDeps<DB>;
  readonly #db: Kysely<OutboxTables>;
  readonly #backoff: BackoffOptions;
  readonly #state: StateLog;
  readonly #labels: { readonly consumer: string };

  constructor(deps: DedupConsumerDeps<DB>, backoff: BackoffOptions) {
    const consumer = deps.options.consumerName;
    this.#deps = deps;
    this.#db = outboxDb(deps.db);
    this.#backoff = backoff;
    this.#state = new StateLog(deps.logger, { component: 'dedup-consumer', consumer });
    this.#labels = { consumer };
  }

  async applyFetch(batch: ConsumedBatch, control: BatchControl): Promise<void> {
    const unit = `${batch.topic}/${batch.partition}`;
    const progress = this.#deps.metrics?.stalls.reporter('dedup-consumer', unit);
    let lastDone: string | undefined;
    const done = (offset: string): void => {
      lastDone = offset;
      progress?.progressed();
    };
    const work: ActiveBatch = { batch, control, progress, done };
    progress?.hasWork(true);
    // The parsed events since the last malformed message: applied together, before it is parked.
    let run: FetchedEvent[] = [];
    const started: FetchedEvent[] = [];
    try {
      for (const message of batch.messages) {
        if (!control.active()) break;
        const validate = this.#deps.options.validate;
        const parsed = parseMessage(batch.topic, batch.partition, message, validate);
        if (parsed.ok) {
          const item = {
            message,
            event: parsed.event,
            span: this.#span(parsed.event),
            ended: false,
          };
          run.push(item);
          started.push(item);
          continue;
        }
        await this.#applyOrSplit(work, run);
        run = [];
        await this.#park(work, message, parsed.reason);
        done(message.offset);
      }
      await this.#applyOrSplit(work, run);
    } catch (error) {
      for (const item of started) if (!item.ended) item.span.end(error);
      if (!(error instanceof Abandoned)) throw error;
    } finally {
      progress?.hasWork(false);
    }
    // What is done stays done, also when the group moved on mid-batch.
    if (lastDone !== undefined) await control.commit(lastDone);
  }

  /**
   * Applies a set of consecutive events of the partition, retrying; returns once each is
   * applied, a duplicate, or parked.
   */
  async #applyOrSplit(work: ActiveBatch, items: readonly FetchedEvent[]): Promise<void> {
    const [only] = items;
    const last = items.at(-1);
    if (last === undefined) return;
    const maxAttempts = this.#deps.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    let handlerFailures = 0;
    for (let attempt = 1; ; attempt++) {
      if (!work.control.active()) throw new Abandoned();
      let outcomes: Outcome[];
      try {
        outcomes = await this.#applySet(items);
      } catch (error) {
        // PostgreSQL refused some event's data (a NUL in a text column...): the same data
        // fails the same way every time, so the set is split now, and the event parked alone.
        const refusal = dataErrorOf(error);
        if (refusal !== undefined && only !== undefined && items.length === 1)
          return this.#parkAlone(work, only, refusedDataReason(refusal));
        // Only failures with the database reachable count towards parking, or split a set: an
        // outage must not push good messages into the parking lot, nor apply them one by one.
        const databaseUp = refusal !== undefined || (await this.#databaseAnswers());
        if (databaseUp && items.length > 1) {
          const middle = Math.ceil(items.length / 2);
          await this.#applyOrSplit(work, items.slice(0, middle));
          await this.#applyOrSplit(work, items.slice(middle));
          return;
        }
        if (databaseUp) handlerFailures += 1;
        this.#state.failed('dedup consumer', error);
        work.progress?.failed(error);
        if (only !== undefined && handlerFailures >= maxAttempts) {
          const reason = `handler failed ${handlerFailures} times: ${describe(error)}`;
          return this.#parkAlone(work, only, reason);
        }
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(this.#backoff, attempt)));
        continue;
      }
      this.#state.ok('dedup consumer');
      await this.#settle(items, outcomes);
      work.done(last.message.offset);
      return;
    }
  }

  /** One transaction: the set's processed_event rows, then the effects of the new events. */
  #applySet(items: readonly FetchedEvent[]): Promise<Outcome[]> {
    return this.#deps.db.transaction().execute(async (trx) => {
      const isNew = await recordProcessedEvents(
        outboxTrx(trx),
        this.#labels.consumer,
        items.map((item) => item.event.eventId),
      );
      await this.#runEffects(
        trx,
        items.filter((_, i) => isNew[i] === true),
      );
      return isNew.map((fresh): Outcome => (fresh ? 'applied' : 'duplicate'));
    });
  }

  /** The effects of the new events of a set, in order, each in its event's trace context. */
  async #runEffects(trx: Transaction<DB>, fresh: readonly FetchedEvent[]): Promise<void> {
    if (fresh.length === 0) return;
    const deps = this.#deps;
    if (deps.handleBatch !== undefined) {
      await deps.handleBatch(
        trx,
        fresh.map((item) => item.event),
      );
      return;
    }
    for (const item of fresh) await item.span.activate(() => deps.handle(trx, item.event));
  }

  /** Ends each event's span with its outcome, counts it, and runs the afterApply hook. */
  async #settle(items: readonly FetchedEvent[], outcomes: readonly Outcome[]): Promise<void> {
    const metrics = this.#deps.metrics;
    for (const [i, item] of items.entries()) {
      const outcome = outcomes[i] ?? 'parked';
      if (outcome === 'duplicate') item.span.markDuplicate();
      item.span.end(outcome === 'parked' ? 'parked' : undefined);
      item.ended = true;
      if (outcome === 'applied') metrics?.dedupAppliedTotal.inc(this.#labels);
      if (outcome === 'duplicate') metrics?.dedupDuplicatesTotal.inc(this.#labels);
    }
    for (const [i, item] of items.entries()) {
      if (outcomes[i] !== 'applied') continue;
      const { eventId, eventType } = item.event;
      await this.#deps.hooks?.afterApply?.({ eventId, eventType });
    }
  }

  async #parkAlone(work: ActiveBatch, item: FetchedEvent, reason: string): Promise<void> {
    await this.#park(work, item.message, reason);
    await this.#settle([item], ['parked']);
    work.done(item.message.offset);
  }

  async #park(work: ActiveBatch, message: ConsumedMessage, reason: string): Promise<void> {
    const { topic, partition } = work.batch;
    const consumer = this.#labels.consumer;
    await retryInPlace(
      () =>
        this.#db
          .transaction()
          .execute((trx) => parkMessages(trx, consumer, [{ topic, partition, message, reason }]))
          .catch((error: unknown) => {
            work.progress?.failed(error);
            throw error;
          }),
      {
        backoff: this.#backoff,
        state: this.#state,
        what: 'dedup consumer (parking)',
        keepGoing: () => work.control.active(),
        beat: work.control.heartbeat,
      },
    );
    this.#deps.metrics?.parkedTotal.inc(this.#labels);
    this.#deps.logger.warn(
      { component: 'dedup-consumer', topic, partition, offset: message.offset, reason },
      'message parked',
    );
  }

  #databaseAnswers(): Promise<boolean> {
    return sql`SELECT 1`.execute(this.#db).then(
      () => true,
      () => false,
    );
  }

  /** The span of an event's apply: it continues the trace its message carries. */
  #span(event: ReceivedEvent): EventSpan {
    return startEventSpan({
      operation: 'apply',
      topic: event.topic,
      eventId: event.eventId,
      eventType: event.eventType,
      partitionKey: event.partitionKey,
      headers: event.headers,
      consumerGroup: this.#deps.options.groupId,
      partition: event.partition,
      offset: event.offset,
    });
  }
}
