import { Kafka, Partitioners, logLevel, type Producer } from 'kafkajs';
import { sleep } from './stats.ts';

export function benchKafka(brokers: readonly string[], clientId = 'bench'): Kafka {
  return new Kafka({ brokers: [...brokers], clientId, logLevel: logLevel.NOTHING });
}

/**
 * The producer the baselines use: the same settings as the relay's own producer
 * (packages/outbox src/relay/publish-batch.ts `createRelayProducer`: idempotent, acks -1 on
 * every send, one request in flight, Java-compatible partitioner), so a comparison measures
 * the relay's work around the send, not a different transport configuration.
 */
export function baselineProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** Broker-stamped timestamps: a record's timestamp is when Kafka appended it (≈ its ack). */
  readonly logAppendTime?: boolean;
}

/** Creates the topics, deleting them first when they exist (a scenario starts from empty). */
export async function freshTopics(kafka: Kafka, specs: readonly TopicSpec[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const stale = specs.map((s) => s.topic).filter((t) => existing.has(t));
    if (stale.length > 0) {
      await admin.deleteTopics({ topics: stale, timeout: 30_000 });
    }
    // Deletion completes asynchronously on the broker; creation fails until it has.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: specs.map((s) => ({
            topic: s.topic,
            numPartitions: s.partitions,
            configEntries: s.logAppendTime
              ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }]
              : [],
          })),
        });
        const now = new Set(await admin.listTopics());
        if (specs.every((s) => now.has(s.topic))) return;
      } catch (error) {
        if (attempt >= 50) throw error;
      }
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
}
