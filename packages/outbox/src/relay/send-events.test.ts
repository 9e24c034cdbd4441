import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { ClaimedEvent } from './claim-batch.ts';
import { sendEvents } from './send-events.ts';

function event(id: number, key: string): ClaimedEvent {
  return {
    id: String(id),
    event_id: `00000000-0000-7000-8000-${String(id).padStart(12, '0')}`,
    event_type: 'Step',
    aggregate_type: 'order',
    aggregate_id: key,
    topic: 'order.events',
    partition_key: key,
    payload: '{}',
    headers: {},
    created_at: new Date(0),
    publish_attempts: 0,
  };
}

/**
 * A producer that places each key on its own partition (as the relay's pinning partitioner
 * writes the partition into the message) and answers for the partitions `answered` keeps: what
 * kafkajs 2.2.4's sendBatch resolves with after a retry that skipped a broker.
 */
function producerAnswering(answered: (partition: number) => boolean): Producer {
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
  return { sendBatch } as unknown as Producer;
}

const options = { maxEventBytes: 1_000_000, sendTimeoutMs: 1000, keepAlive: async () => 0 };

describe('sendEvents on a cluster', () => {
  it('acknowledges a batch only when every partition it went to is in Kafka’s answer', async () => {
    const events = [event(1, 'key-0'), event(2, 'key-1'), event(3, 'key-2')];
    const all = await sendEvents(
      producerAnswering(() => true),
      events,
      options,
    );
    expect(all.acked.map((one) => one.id)).toEqual(['1', '2', '3']);
    await expect(
      sendEvents(
        producerAnswering((partition) => partition !== 1),
        events,
        options,
      ),
    ).rejects.toMatchObject({ code: 'SEND_INCOMPLETE' });
  });
});
