import { Kafka, logLevel, Partitioners, type Message } from 'kafkajs';
import type { PoisonMessage } from './poison-messages.ts';

/** Where a produced message landed on its topic. */
export interface Landed {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/**
 * Produces messages byte for byte (kafkajs sends Buffers as they are) with Kafka's default
 * partitioner, one send each, and returns where each landed, in order.
 */
export async function produceRaw(
  brokers: readonly string[],
  messages: readonly Pick<PoisonMessage, 'topic' | 'key' | 'value' | 'headers'>[],
): Promise<Landed[]> {
  const producer = new Kafka({
    clientId: 'e2e-poison',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  }).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    const landed: Landed[] = [];
    for (const { topic, key, value, headers } of messages) {
      const message: Message = { key, value, headers };
      const [metadata] = await producer.send({ topic, acks: -1, messages: [message] });
      if (metadata === undefined) throw new Error(`no acknowledgement from ${topic}`);
      landed.push({ topic, partition: metadata.partition, offset: metadata.baseOffset ?? '' });
    }
    return landed;
  } finally {
    await producer.disconnect();
  }
}
