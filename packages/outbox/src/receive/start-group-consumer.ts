import type { BackoffOptions } from '../internal/backoff.ts';
import type { BatchControl, ConsumedBatch, KafkaClient } from '../kafka-port/kafka-client.ts';
import type { Logger } from '../logger.ts';
import type { OutboxMetrics } from '../ops/metrics.ts';
import type { Worker } from '../worker.ts';
import { DEFAULT_MAX_WAIT_TIME_MS, DEFAULT_SESSION_TIMEOUT_MS } from './consumer-settings.ts';

/** The group settings both receivers take (InboxWriterOptions, DedupConsumerOptions). */
export interface GroupSettings {
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly fromBeginning?: boolean | undefined;
  readonly sessionTimeoutMs?: number | undefined;
  readonly rebalanceTimeoutMs?: number | undefined;
  readonly maxWaitTimeMs?: number | undefined;
  readonly partitionsConsumedConcurrently?: number | undefined;
}

export interface GroupConsumerSpec {
  /** The worker the stall watch and the logs name: `inbox-writer`, `dedup-consumer`. */
  readonly worker: string;
  readonly kafka: KafkaClient;
  readonly logger: Logger;
  readonly metrics: OutboxMetrics | undefined;
  readonly settings: GroupSettings;
  readonly backoff: BackoffOptions;
  readonly eachBatch: (batch: ConsumedBatch, control: BatchControl) => Promise<void>;
}

/**
 * The start both receivers share: a member of the group with the library's defaults, whose
 * membership the stall watch follows and whose group's lag `kafka_consumer_lag` shows.
 */
export async function startGroupConsumer(spec: GroupConsumerSpec): Promise<Worker> {
  const { kafka, settings, metrics } = spec;
  const consumer = await kafka.startConsumer({
    name: spec.worker.replaceAll('-', ' '),
    groupId: settings.groupId,
    topics: settings.topics,
    fromBeginning: settings.fromBeginning ?? true,
    sessionTimeoutMs: settings.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: settings.rebalanceTimeoutMs,
    maxWaitTimeMs: settings.maxWaitTimeMs ?? DEFAULT_MAX_WAIT_TIME_MS,
    partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently ?? 3,
    logger: spec.logger,
    backoff: spec.backoff,
    eachBatch: spec.eachBatch,
    membership: metrics?.stalls.reporter(spec.worker, 'group membership'),
  });
  const unwatchLag = metrics?.consumerLag.watch(kafka, settings.groupId, settings.topics);
  return {
    async stop() {
      await consumer.stop();
      await unwatchLag?.();
    },
  };
}
