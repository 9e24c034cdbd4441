import { randomUUID } from 'node:crypto';
import { Partitioners, type Kafka } from 'kafkajs';
import type { Received } from './harness.ts';

/** A topic with its own configuration, e.g. `{ 'max.message.bytes': '2000' }`. */
export async function createConfiguredTopic(
  kafka: Kafka,
  prefix: string,
  partitions: number,
  config: Readonly<Record<string, string>>,
): Promise<string> {
  const topic = `${prefix}-${randomUUID().slice(0, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: partitions,
          configEntries: Object.entries(config).map(([name, value]) => ({ name, value })),
        },
      ],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  return topic;
}

/** Messages on the topic (sum of the partitions' end offsets): counts every copy, at once. */
export async function messagesOnTopic(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
  } finally {
    await admin.disconnect();
  }
}

/** How many times each event id is on the topic. */
export function copiesByEventId(messages: readonly Received[]): Map<string, number> {
  const copies = new Map<string, number>();
  for (const message of messages) {
    copies.set(message.eventId, (copies.get(message.eventId) ?? 0) + 1);
  }
  return copies;
}

/** The partition Kafka's default partitioner gives `key` in a topic of `partitions`. */
export function partitionOf(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  return Partitioners.DefaultPartitioner()({
    topic: 'any',
    partitionMetadata,
    message: { key, value: null },
  });
}

/** The first `count` keys `${prefix}0`, `${prefix}1`, ... that land in `partition`. */
export function keysInPartition(
  prefix: string,
  partition: number,
  partitions: number,
  count: number,
): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    if (partitionOf(`${prefix}${i}`, partitions) === partition) keys.push(`${prefix}${i}`);
  }
  return keys;
}
