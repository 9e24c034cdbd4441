/**
 * Per-key order holds across clients only when every producer of a topic puts a key in the
 * same partition. The relay's producer must place keys as Kafka's own Java producer does
 * (murmur2 of the key bytes), so a service in another language, or a connector, can publish
 * beside it without splitting a key's events over two partitions.
 */
import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
import type { KafkaClient } from '@outbox-inbox/outbox';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { platformaticClient } from '@outbox-inbox/outbox/platformatic';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { produceRaw } from '../poison/produce-poison.ts';

const topic = 'partitioning.check';
const partitions = 6;

/** UUIDs as the services key their events, and keys whose bytes are not plain ASCII. */
const keys = [
  ...Array.from({ length: 200 }, () => randomUUID()),
  'order-1',
  'заказ-42',
  '注文-7',
  'emoji-🧾',
  'a',
  'x'.repeat(300),
];

let stack: Stack;
let kafka: Kafka;

beforeAll(async () => {
  stack = await Stack.up({
    name: `partitioning-${process.pid}`,
    servers: ['kafka'],
    env: { ...process.env, STACK_PROVIDER: 'local' },
  });
  kafka = new Kafka({
    clientId: 'partitioning',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}, 180_000);

afterAll(async () => {
  await stack?.down();
});

/** Where the port's producer on `client` put each key. */
async function placedBy(client: KafkaClient): Promise<Map<string, number>> {
  const producer = client.createProducer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const report = await producer.send(
      keys.map((key) => ({ topic, key, value: client.name, headers: {} })),
      { timeoutMs: 30_000, keepAlive: async () => undefined },
    );
    return new Map(
      keys.map((key, i) => {
        const outcome = report.outcomes[i];
        return [key, outcome?.kind === 'acked' ? outcome.partition : -1] as const;
      }),
    );
  } finally {
    await producer.disconnect();
  }
}

describe("the relay's producer places keys as Kafka's Java producer does, on either client", () => {
  it('sends every key to the partition the Java client picks for it', async () => {
    const landed = await produceRaw(
      stack.kafkaBrokers,
      keys.map((key) => ({
        topic,
        key: Buffer.from(key),
        value: Buffer.from('java'),
        headers: {},
      })),
    );
    const fromJava = new Map(keys.map((key, n) => [key, landed[n]?.partition ?? -2]));
    // Not vacuous: the keys spread over every partition.
    expect(new Set(fromJava.values()).size).toBe(partitions);
    const clients = [
      kafkajsClient(kafka),
      platformaticClient({ clientId: 'partitioning', brokers: stack.kafkaBrokers }),
    ];
    for (const client of clients) {
      const fromRelay = await placedBy(client);
      const differing = keys.filter((key) => fromRelay.get(key) !== fromJava.get(key));
      expect(differing, `keys ${client.name} placed differently from the Java producer`).toEqual(
        [],
      );
    }
  }, 180_000);
});
