import type { Consumer, ConsumerConfig, Kafka } from 'kafkajs';
import { backoffDelay, type BackoffOptions } from '../internal/backoff.ts';
import { StateLog } from '../internal/state-log.ts';
import { Wakeup } from '../internal/wakeup.ts';
import type { Logger } from '../logger.ts';
import type { Worker } from '../worker.ts';

export interface SupervisedConsumer {
  readonly kafka: Kafka;
  readonly config: ConsumerConfig;
  readonly topics: readonly string[];
  readonly fromBeginning: boolean;
  readonly logger: Logger;
  readonly backoff: BackoffOptions;
  readonly name: string;
  /** Calls `consumer.run(...)`. */
  readonly run: (consumer: Consumer) => Promise<void>;
}

/**
 * Default session timeout: how long a member that died without leaving (SIGKILL, a lost host)
 * keeps its partitions. Short, because every batch heartbeats while it works
 * (`startBatchHeartbeat`); kafkajs's default is 30 s.
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

/** kafkajs consumer settings from the library's options (defaults in one place). */
export function consumerConfig(options: {
  readonly groupId: string;
  readonly sessionTimeoutMs?: number;
  readonly maxWaitTimeMs?: number;
}): ConsumerConfig & { readonly heartbeatInterval: number } {
  const sessionTimeout = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  return {
    groupId: options.groupId,
    sessionTimeout,
    // Ten beats per session: a member survives a stall of most of its session timeout.
    heartbeatInterval: Math.max(500, Math.floor(sessionTimeout / 10)),
    maxWaitTimeInMs: options.maxWaitTimeMs ?? 1000,
  };
}

export const DEFAULT_CONSUMER_BACKOFF: BackoffOptions = Object.freeze({
  initialMs: 200,
  maxMs: 10_000,
  multiplier: 2,
});

/**
 * Keeps a kafkajs consumer running: connects (retrying while Kafka is down) and rebuilds the
 * consumer after a CRASH that kafkajs will not restart by itself (non-retriable errors).
 * Resolves once the first attempt to start is over, whether it worked or is being retried.
 */
export async function superviseConsumer(spec: SupervisedConsumer): Promise<Worker> {
  const state = new StateLog(spec.logger, { component: spec.name, groupId: spec.config.groupId });
  const pause = new Wakeup();
  let running = true;
  let current: { consumer: Consumer; crashed: Wakeup } | undefined;
  let firstAttempt: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (firstAttempt = resolve));

  const loop = async (): Promise<void> => {
    while (running) {
      const consumer = spec.kafka.consumer(spec.config);
      const crashed = new Wakeup();
      consumer.on(consumer.events.CRASH, (event) => {
        if (event.payload.restart) {
          state.failed(`${spec.name} (kafkajs restarts it)`, event.payload.error);
        } else {
          state.failed(spec.name, event.payload.error);
          crashed.wake();
        }
      });
      consumer.on(consumer.events.GROUP_JOIN, () => state.ok(spec.name));
      current = { consumer, crashed };
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [...spec.topics], fromBeginning: spec.fromBeginning });
        await spec.run(consumer);
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
