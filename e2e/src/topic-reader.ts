import { pollUntil } from '@outbox-inbox/infra';
import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';

export interface TopicMessage {
  readonly partition: number;
  readonly offset: string;
  readonly key: string;
  readonly eventId: string;
  readonly eventType: string;
}

function header(value: Buffer | string | (Buffer | string)[] | undefined): string {
  if (value === undefined) return '';
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? '' : first.toString();
}

/**
 * The topic's offsets, asked again while its partitions have no leader yet: right after a topic
 * is created (or Kafka restarted) a broker answers NOT_LEADER_FOR_PARTITION for a moment.
 */
function settledOffsets(admin: Admin, topic: string) {
  return pollUntil(() => admin.fetchTopicOffsets(topic), {
    timeoutMs: 30_000,
    description: `the offsets of ${topic}`,
  });
}

/**
 * Reads a topic from the beginning up to its high watermarks at the time of the call, in
 * partition order, with a throwaway consumer group: the suite's view of what was delivered.
 */
export async function readWholeTopic(
  brokers: readonly string[],
  topic: string,
): Promise<TopicMessage[]> {
  const kafka = new Kafka({
    clientId: 'e2e-reader',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await settledOffsets(admin, topic).finally(() => admin.disconnect());
  const remaining = new Map(
    ends
      .filter((end) => end.high !== end.low && Number(end.high) > 0)
      .map((end) => [end.partition, BigInt(end.high)]),
  );
  const messages: TopicMessage[] = [];
  if (remaining.size === 0) return messages;

  // It reads what is there, so a fetch need not wait for more: on a cluster, the disconnect
  // below waits for the fetch still open to each node, for as long as the fetch may wait.
  const consumer = kafka.consumer({
    groupId: `e2e-reader-${topic}-${process.pid}-${Date.now()}`,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    await readUntilEnds(consumer, topic, remaining, messages);
  } finally {
    await consumer.disconnect();
  }
  return messages.sort(
    (a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)),
  );
}

/**
 * Runs the subscribed consumer, adding each message to `messages`, until every partition in
 * `remaining` was read up to its end offset (each is deleted from it then); fails after 2 min.
 */
function readUntilEnds(
  consumer: Consumer,
  topic: string,
  remaining: Map<number, bigint>,
  messages: TopicMessage[],
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`reading ${topic}: ${remaining.size} partitions unfinished`)),
      120_000,
    );
    void consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          messages.push({
            partition,
            offset: message.offset,
            key: message.key?.toString() ?? '',
            eventId: header(message.headers?.['event_id']),
            eventType: header(message.headers?.['event_type']),
          });
          const end = remaining.get(partition);
          if (end !== undefined && BigInt(message.offset) + 1n >= end) remaining.delete(partition);
          if (remaining.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
}

/** How many messages a topic holds now: the sum of its partitions' high watermarks. */
export async function topicHighWatermark(
  brokers: readonly string[],
  topic: string,
): Promise<number> {
  const admin = new Kafka({
    clientId: 'e2e-watermarks',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const offsets = await settledOffsets(admin, topic);
    return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
  } finally {
    await admin.disconnect();
  }
}
