import type { Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import { StateLog } from '../internal/state-log.ts';
import type { StepOutcome, WorkerLoops } from '../internal/worker-loop.ts';
import type { KafkaClient } from '../kafka-port/kafka-client.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { ProgressReporter } from '../worker.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { hasUnpublishedEvents } from './has-unpublished-events.ts';
import { LaneProducer } from './lane-producer.ts';
import { publishBatch, type BatchResult } from './publish-batch.ts';
import type { RelayOptions } from './relay-options.ts';

/** What every lane of one relay shares. */
export interface RelayContext {
  readonly db: Kysely<OutboxTables>;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics: OutboxMetrics | undefined;
  readonly options: RelayOptions;
  readonly loops: WorkerLoops;
  readonly progress: ProgressReporter | undefined;
  /** Asks (at most every few seconds) whether unpublished rows exist: the stall watch's work. */
  readonly probeWork: () => void;
  /** Asks how long the oldest row the commit-order fence holds has waited. */
  readonly probeFence: () => void;
  /** NOTIFYs heard so far: a lane woken with none since it waited was woken by the poll. */
  readonly notices: () => number;
}

/** One batch: claim, send, mark. What it found says what the lane does next. */
async function publishOnce(
  relay: RelayContext,
  producer: LaneProducer,
  lane: number,
): Promise<StepOutcome> {
  const sendFailed = async (error: unknown): Promise<StepOutcome> => {
    relay.metrics?.publishFailuresTotal.inc();
    await producer.drop();
    return { next: 'back-off', error };
  };
  let result: BatchResult;
  try {
    const ready = await producer.connected();
    const { db, options, metrics } = relay;
    result = await publishBatch({ db, producer: ready, options, metrics });
  } catch (error) {
    return sendFailed(error);
  }
  if (result.published > 0) relay.progress?.progressed();
  else relay.probeWork();
  for (const event of result.failed) {
    relay.logger.warn(
      { component: 'outbox-relay', lane, ...event },
      'outbox event set aside as FAILED; later events of its key wait until it is retried or skipped',
    );
  }
  // What Kafka answered is committed; the rest is tried again after a pause.
  if (result.interruption !== undefined) return sendFailed(result.interruption);
  if (result.retrying > 0) {
    // Refused rows that may pass later (unknown topic...): pace the tries, keep the producer
    // (its sequence numbers are in step with the broker's).
    const reason = `Kafka refused ${result.retrying} event(s); trying again`;
    return { next: 'back-off', error: new OutboxError('PUBLISH_REFUSED', reason) };
  }
  if (result.full) return { next: 'step' };
  relay.probeFence();
  // Caught up: the claim took every row it could. Wait for a NOTIFY or the poll, after a
  // partial batch first letting commits gather for lingerMs. Rows the fence held back need no
  // claim of their own: the writer they wait for NOTIFYs at its commit, and the poll covers
  // writers that do not notify. Claiming again at once would cost each batch of one an empty
  // claim.
  return { next: 'wait', lingerMs: result.claimed > 0 ? relay.options.lingerMs : 0 };
}

/**
 * One claim-send-mark loop with its own producer. Several lanes behave like several relays
 * (the claim keeps keys disjoint), so one lane's database work overlaps another's wait for
 * Kafka.
 */
export function startRelayLane(relay: RelayContext, lane: number): void {
  const producer = new LaneProducer(relay.kafka, relay.options);
  // The NOTIFYs heard when the lane last caught up; undefined while it has work.
  let noticesAtWait: number | undefined;
  const step = async (): Promise<StepOutcome> => {
    const polled = noticesAtWait !== undefined && relay.notices() === noticesAtWait;
    noticesAtWait = undefined;
    // The poll finds nothing almost always: one statement says so, where an empty batch costs
    // four (BEGIN with its settings, the claim, COMMIT). A NOTIFY, or rows found, claim at once.
    if (polled && !(await hasUnpublishedEvents(relay.db))) {
      relay.progress?.hasWork(false);
      relay.probeFence();
      noticesAtWait = relay.notices();
      return { next: 'wait' };
    }
    const outcome = await publishOnce(relay, producer, lane);
    if (outcome.next === 'wait') noticesAtWait = relay.notices();
    return outcome;
  };
  relay.loops.start({
    what: 'outbox relay',
    state: new StateLog(relay.logger, { component: 'outbox-relay', lane }),
    step,
    failed: (error) => {
      relay.progress?.failed(error);
      relay.probeWork();
    },
    backoff: relay.options.backoff,
    intervalMs: relay.options.pollIntervalMs,
    ended: () => producer.drop(),
  });
}
