import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { backoffDelay } from '../../internal/backoff.ts';
import { FETCH_MAX_BYTES_PER_PARTITION, FETCH_MIN_BYTES } from '../../receive/consumer-settings.ts';
import { StateLog } from '../../internal/state-log.ts';
import { Wakeup } from '../../internal/wakeup.ts';
import type { Worker } from '../../worker.ts';
import type { BatchControl, ConsumerSpec } from '../kafka-client.ts';
import { startBatchHeartbeat } from './batch-heartbeat.ts';
import type { CountRequests } from './request-counting.ts';

/**
 * Keeps a kafkajs consumer running: connects (retrying while Kafka is down) and rebuilds the
 * consumer after a CRASH that kafkajs will not restart by itself (non-retriable errors).
 * Resolves once the first attempt to start is over, whether it worked or is being retried.
 */
export async function startKafkajsConsumer(
  kafka: Kafka,
  spec: ConsumerSpec,
  countRequests: CountRequests = () => undefined,
): Promise<Worker> {
  const state = new StateLog(spec.logger, { component: spec.name, groupId: spec.groupId });
  // Ten beats per session: a member survives a stall of most of its session timeout.
  const heartbeatInterval = Math.max(500, Math.floor(spec.sessionTimeoutMs / 10));
  const pause = new Wakeup();
  let running = true;
  let current: { consumer: Consumer; crashed: Wakeup } | undefined;
  let firstAttempt: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (firstAttempt = resolve));

  const loop = async (): Promise<void> => {
    while (running) {
      const consumer = createConsumer(kafka, spec, heartbeatInterval);
      countRequests(consumer);
      const crashed = new Wakeup();
      watchCrashes(consumer, spec, state, crashed);
      current = { consumer, crashed };
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [...spec.topics], fromBeginning: spec.fromBeginning });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          partitionsConsumedConcurrently: spec.partitionsConsumedConcurrently,
          eachBatch: (payload) => handleBatch(spec, consumer, payload, heartbeatInterval),
        });
        firstAttempt();
        await crashed.wait(2 ** 31 - 1);
      } catch (error) {
        state.failed(spec.name, error);
        firstAttempt();
      }
      current = undefined;
      await consumer.disconnect().catch(() => undefined);
      if (running) await pause.wait(backoffDelay(spec.backoff, Math.max(1, state.failures)));
    }
  };
  const done = loop();
  await started;
  return {
    async stop() {
      running = false;
      pause.wake();
      const active = current;
      // disconnect() waits for the batch in progress, which commits or rolls back on its own.
      active?.crashed.wake();
      await active?.consumer.disconnect().catch(() => undefined);
      await done;
    },
  };
}

/** One batch for the port's handler, heartbeating while it works. */
async function handleBatch(
  spec: ConsumerSpec,
  consumer: Consumer,
  payload: EachBatchPayload,
  heartbeatInterval: number,
): Promise<void> {
  const heartbeat = startBatchHeartbeat(payload, heartbeatInterval);
  try {
    await spec.eachBatch(payload.batch, batchControl(spec, consumer, payload, heartbeat));
  } finally {
    heartbeat.stop();
  }
}

function createConsumer(kafka: Kafka, spec: ConsumerSpec, heartbeatInterval: number): Consumer {
  return kafka.consumer({
    groupId: spec.groupId,
    sessionTimeout: spec.sessionTimeoutMs,
    ...(spec.rebalanceTimeoutMs === undefined
      ? {}
      : { rebalanceTimeout: Math.max(spec.sessionTimeoutMs, spec.rebalanceTimeoutMs) }),
    heartbeatInterval,
    maxWaitTimeInMs: spec.maxWaitTimeMs,
    // Why these make full fetches under load and no wait at a low rate: consumer-settings.ts.
    minBytes: FETCH_MIN_BYTES,
    maxBytesPerPartition: FETCH_MAX_BYTES_PER_PARTITION,
  });
}

/** A crash kafkajs restarts is logged; one it does not wakes the loop to build a new consumer. */
function watchCrashes(consumer: Consumer, spec: ConsumerSpec, state: StateLog, crashed: Wakeup) {
  consumer.on(consumer.events.CRASH, (event) => {
    if (event.payload.restart) {
      state.failed(`${spec.name} (kafkajs restarts it)`, event.payload.error);
    } else {
      state.failed(spec.name, event.payload.error);
      crashed.wake();
    }
  });
  consumer.on(consumer.events.GROUP_JOIN, () => state.ok(spec.name));
}

/** What the port's batch handler may ask of kafkajs about the batch it handles. */
function batchControl(
  spec: ConsumerSpec,
  consumer: Consumer,
  payload: EachBatchPayload,
  heartbeat: { readonly lost: boolean },
): BatchControl {
  const { topic, partition } = payload.batch;
  return {
    active: () => payload.isRunning() && !payload.isStale() && !heartbeat.lost,
    heartbeat: () => payload.heartbeat(),
    async commit(lastDone) {
      const offset = (BigInt(lastDone) + 1n).toString();
      try {
        await consumer.commitOffsets([{ topic, partition, offset }]);
      } catch (error) {
        spec.logger.warn(
          { component: spec.name, topic, partition, offset, err: error },
          'offset commit failed; the batch may be delivered again (duplicates are dropped)',
        );
      }
      // The messages are done either way: this member fetches on from the next one (a failed
      // commit is covered by a later one, or by the dedup after a rebalance).
      payload.resolveOffset(lastDone);
    },
  };
}
