import type { KafkaClient } from '@outbox-inbox/outbox';
import type { EventProducer, OutgoingRecord } from '@outbox-inbox/outbox/kafka-port';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { platformaticClient } from '@outbox-inbox/outbox/platformatic';
import { Kafka, logLevel } from 'kafkajs';
import { sleep } from './stats.ts';

/** The library's port on the bench's Kafka client. */
export function benchClient(kafka: Kafka): KafkaClient {
  return kafkajsClient(kafka);
}

/** The client libraries behind the library's port that B1 and B5 measure side by side. */
export type ClientName = 'kafkajs' | 'platformatic';
export const clientNames: readonly ClientName[] = ['kafkajs', 'platformatic'];

/** The port on each client library, both on the stack's brokers. */
export function benchClients(
  kafka: Kafka,
  brokers: readonly string[],
): Readonly<Record<ClientName, KafkaClient>> {
  return {
    kafkajs: kafkajsClient(kafka),
    platformatic: platformaticClient({ clientId: 'bench', brokers }),
  };
}

/** Sends records through the port; fails unless Kafka acknowledged every one. */
export async function sendAll(
  producer: EventProducer,
  records: readonly OutgoingRecord[],
): Promise<void> {
  const report = await producer.send(records, {
    timeoutMs: 30_000,
    keepAlive: async () => undefined,
  });
  const unacked = report.outcomes.filter((outcome) => outcome.kind !== 'acked').length;
  if (unacked > 0) {
    throw new Error(`Kafka did not acknowledge ${unacked} of ${records.length} record(s)`, {
      cause: report.interruption ?? report.outcomes.find((outcome) => outcome.kind !== 'acked'),
    });
  }
}

export function benchKafka(brokers: readonly string[], clientId = 'bench'): Kafka {
  return new Kafka({ brokers: [...brokers], clientId, logLevel: logLevel.NOTHING });
}

export interface TopicSpec {
  readonly topic: string;
  readonly partitions: number;
  /** Broker-stamped timestamps: a record's timestamp is when Kafka appended it (≈ its ack). */
  readonly logAppendTime?: boolean;
  /** Replicas per partition (the broker's default, 1 on one broker, when absent). */
  readonly replicationFactor?: number;
  /** With acks -1, how many replicas must have a write before it is acknowledged. */
  readonly minInsyncReplicas?: number;
}

async function createTopics(admin: ReturnType<Kafka['admin']>, specs: readonly TopicSpec[]) {
  await admin.createTopics({
    waitForLeaders: true,
    topics: specs.map((s) => ({
      topic: s.topic,
      numPartitions: s.partitions,
      ...(s.replicationFactor === undefined ? {} : { replicationFactor: s.replicationFactor }),
      configEntries: [
        ...(s.logAppendTime ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : []),
        ...(s.minInsyncReplicas === undefined
          ? []
          : [{ name: 'min.insync.replicas', value: String(s.minInsyncReplicas) }]),
      ],
    })),
  });
  const now = new Set(await admin.listTopics());
  return specs.every((s) => now.has(s.topic));
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
        if (await createTopics(admin, specs)) return;
      } catch (error) {
        if (attempt >= 50) throw error;
      }
      await sleep(200);
    }
  } finally {
    await admin.disconnect();
  }
}

/** How many records a topic holds: the sum of its partitions' end offsets (nothing is deleted). */
export async function topicRecordCount(
  admin: ReturnType<Kafka['admin']>,
  topic: string,
): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
}
