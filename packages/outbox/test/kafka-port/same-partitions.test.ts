import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { Partitioners } from 'kafkajs';
import type { KafkaClient } from '../../src/index.ts';
import type { OutgoingRecord } from '../../src/kafka-port.ts';
import { kafkajsClient } from '../../src/kafkajs.ts';
import { platformaticClient } from '../../src/platformatic.ts';
import { collectTopic, createKafka, createTopic, stack } from '../support/harness.ts';

// Keyed records must land where any other Kafka client puts them (Java's murmur2): a consumer
// of a key's partition, or a second relay on the other adapter, counts on it.
const KEYS = [
  ...Array.from({ length: 300 }, (_, i) => `order-${i}`),
  ...['ü', 'Ωmega', '東京', '🚚-42', '', ' '],
  ...Array.from({ length: 20 }, (_, i) => `${'k'.repeat(i * 7)}${i}`),
];

const sendOptions = { timeoutMs: 20_000, keepAlive: async () => undefined };

async function partitionsOf(client: KafkaClient, topic: string): Promise<Map<string, number>> {
  const producer = client.createProducer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const records: OutgoingRecord[] = KEYS.map((key) => ({
      topic,
      key,
      value: `${client.name}:${key}`,
      headers: { adapter: client.name },
    }));
    const { outcomes } = await producer.send(records, sendOptions);
    return new Map(
      outcomes.map((outcome, i) => {
        if (outcome.kind !== 'acked') throw new Error(`${KEYS[i]}: ${outcome.kind}`);
        return [KEYS[i] as string, outcome.partition];
      }),
    );
  } finally {
    await producer.disconnect();
  }
}

it('the platformatic producer puts each keyed record in the partition kafkajs (DefaultPartitioner) puts it', async () => {
  const kafka = createKafka('same-partitions');
  const topic = await createTopic(kafka, 'same-partitions', 7);
  const onKafkajs = await partitionsOf(kafkajsClient(kafka), topic);
  const onPlatformatic = await partitionsOf(
    platformaticClient({ clientId: 'same-partitions', brokers: stack().kafkaBrokers }),
    topic,
  );

  // kafkajs's own partitioner, asked directly, agrees with what its adapter reported.
  const place = Partitioners.DefaultPartitioner();
  const meta = Array.from({ length: 7 }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));
  for (const key of KEYS) {
    expect(place({ topic, partitionMetadata: meta, message: { key, value: null } })).toBe(
      onKafkajs.get(key),
    );
  }
  expect(new Set(onKafkajs.values()).size).toBe(7);
  expect(onPlatformatic).toEqual(onKafkajs);

  // And the broker holds each record where the adapter said it put it.
  const collected = await collectTopic(kafka, topic);
  try {
    await pollUntil(() => collected.messages.length >= 2 * KEYS.length, {
      timeoutMs: 30_000,
      description: 'both adapters’ records on the topic',
    });
  } finally {
    await collected.stop();
  }
  for (const message of collected.messages) {
    expect(message.partition).toBe(onKafkajs.get(message.key));
  }
  expect(collected.messages.filter((m) => m.value.startsWith('platformatic:'))).toHaveLength(
    KEYS.length,
  );
});
