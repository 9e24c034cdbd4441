import type { Kafka, Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { OutgoingRecord } from '../kafka-client.ts';
import { createKafkajsProducer } from './kafkajs-producer.ts';

function record(key: string): OutgoingRecord {
  return { topic: 'order.events', key, value: '{}', headers: {} };
}

/**
 * A producer that places each key on its own partition (as the relay's pinning partitioner
 * writes the partition into the message) and answers for the partitions `answered` keeps: what
 * kafkajs 2.2.4's sendBatch resolves with after a retry that skipped a broker.
 */
function producerAnswering(answered: (partition: number) => boolean) {
  const sendBatch = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    const partitions = new Set<number>();
    for (const { messages } of batch.topicMessages ?? []) {
      for (const message of messages) {
        message.partition = Number(String(message.key).replace('key-', ''));
        partitions.add(message.partition);
      }
    }
    return [...partitions].filter(answered).map((partition) => ({
      topicName: 'order.events',
      partition,
      errorCode: 0,
    }));
  };
  const producer = { sendBatch } as unknown as Producer;
  const kafka = { producer: () => producer } as unknown as Kafka;
  return createKafkajsProducer(kafka, { allowAutoTopicCreation: false });
}

const options = { timeoutMs: 1000, keepAlive: async () => 0 };

describe('the kafkajs producer on a cluster', () => {
  it('acknowledges a send only when every partition it went to is in Kafka’s answer', async () => {
    const records = [record('key-0'), record('key-1'), record('key-2')];
    const all = await producerAnswering(() => true).send(records, options);
    expect(all.outcomes.map((one) => one.kind)).toEqual(['acked', 'acked', 'acked']);
    await expect(
      producerAnswering((partition) => partition !== 1).send(records, options),
    ).rejects.toMatchObject({ code: 'SEND_INCOMPLETE' });
  });
});
