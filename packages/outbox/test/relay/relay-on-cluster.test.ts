import { randomUUID } from 'node:crypto';
import { Stack, pollUntil } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueueMany, startRelay, type OutboxEventInput } from '../../src/index.ts';
import {
  kafkaClient,
  checkOrder,
  collectTopic,
  count,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

// A three-node cluster of its own (the package's shared stack has one broker); PostgreSQL is
// the shared one.
const clusterName = `outbox-cluster-${process.pid}`;
let cluster: Stack;
let kafka: Kafka;
const testDb = useTestDb('relay_cluster');

beforeAll(async () => {
  cluster = await Stack.up({
    name: clusterName,
    servers: ['kafka'],
    kafkaBrokers: 3,
    env: { ...process.env, STACK_PROVIDER: 'local' },
  });
  kafka = new Kafka({
    clientId: 'outbox-cluster-test',
    brokers: cluster.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}, 180_000);

afterAll(async () => {
  await cluster?.down();
});

const KEYS = 12;
const eventsFor = (topic: string, from: number, n: number): OutboxEventInput[] =>
  Array.from({ length: n }, (_, j) => ({
    eventType: 'Step',
    aggregateType: 'order',
    aggregateId: `order-${(from + j) % KEYS}`,
    topic,
    partitionKey: `order-${(from + j) % KEYS}`,
    payload: { i: from + j },
  }));

it('on a three-node cluster with min.insync.replicas=2: a dead leader and too few in-sync replicas delay the relay, never set rows aside', async () => {
  const topic = `cluster-${randomUUID().slice(0, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      // kafkajs's own wait gives up when it asks a node that has not applied the creation yet.
      waitForLeaders: false,
      topics: [
        {
          topic,
          numPartitions: 6,
          replicationFactor: 3,
          configEntries: [{ name: 'min.insync.replicas', value: '2' }],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
  await pollUntil(
    async () =>
      (await cluster.partitionLeaders()).filter((one) => one.topic === topic && one.leader)
        .length === 6,
    { timeoutMs: 30_000, description: `leaders for ${topic}` },
  );
  const logger = recordingLogger();
  const relay = await startRelay({
    db: testDb.db,
    kafka: kafkaClient(kafka, cluster.kafkaBrokers),
    logger,
    listen: { connectionString: testDb.url },
    options: {
      batchSize: 50,
      sendTimeoutMs: 5000,
      allowAutoTopicCreation: false,
      backoff: { initialMs: 100, maxMs: 1000, multiplier: 2 },
    },
  });
  const written = new Map<string, string[]>();
  const write = async (from: number, n: number): Promise<void> => {
    const events = eventsFor(topic, from, n);
    const { eventIds } = await testDb.db.transaction().execute((trx) => enqueueMany(trx, events));
    events.forEach((event, i) => {
      const ids = written.get(event.partitionKey) ?? [];
      ids.push(eventIds[i] ?? '');
      written.set(event.partitionKey, ids);
    });
  };
  const published = (): Promise<number> =>
    count(testDb.db, 'outbox_event WHERE published_at IS NOT NULL');
  const setAside = (): Promise<number> =>
    count(testDb.db, 'outbox_event WHERE failed_at IS NOT NULL OR publish_attempts > 0');

  try {
    await write(0, 200);
    await pollUntil(async () => (await published()) === 200, {
      timeoutMs: 30_000,
      description: 'the first events published',
    });

    // The leader of partition 0 dies while batches flow: its partitions move to the others.
    const leader = (await cluster.partitionLeaders()).find(
      (one) => one.topic === topic && one.partition === 0,
    )?.leader;
    if (!leader) throw new Error('partition 0 has no leader');
    const writing = (async () => {
      for (let from = 200; from < 600; from += 50) await write(from, 50);
    })();
    await cluster.kill(leader);
    await writing;
    await pollUntil(async () => (await published()) === 600, {
      timeoutMs: 60_000,
      description: 'every event published after the leader died',
    });
    await cluster.start(leader);

    // Two nodes stopped: one in-sync replica left, two required; Kafka refuses the writes.
    const [first, second] = cluster.kafkaNodes;
    if (!first || !second) throw new Error('three nodes expected');
    await cluster.stop(first);
    await cluster.stop(second);
    const linesBefore = logger.lines.length;
    await write(600, 100);
    // What Kafka answers depends on where the cluster is in its transition when the batch
    // arrives (too few in-sync replicas, a leader moving, a request timing out): each is an
    // outage for the relay. What must hold is that it failed to publish and set nothing aside.
    await pollUntil(
      () =>
        logger.lines
          .slice(linesBefore)
          .some((line) => /outbox relay failing/.test(line.msg) && line.level === 'warn'),
      { timeoutMs: 60_000, description: 'the relay to fail to publish with two nodes down' },
    );
    expect(await published()).toBe(600);
    expect(await setAside()).toBe(0);

    // One node back: two in-sync replicas, the backlog drains.
    await cluster.start(first);
    await pollUntil(async () => (await published()) === 700, {
      timeoutMs: 90_000,
      description: 'the backlog published once two replicas are in sync',
    });
    expect(await setAside()).toBe(0);
    await cluster.start(second);
  } finally {
    await relay.stop();
  }

  const collected = await collectTopic(kafka, topic);
  await pollUntil(() => new Set(collected.messages.map((m) => m.eventId)).size >= 700, {
    timeoutMs: 30_000,
    description: 'every event readable from the topic',
  });
  await collected.stop();
  const { outOfOrder, missing } = checkOrder(collected.messages, written);
  expect(missing).toBe(0);
  expect(outOfOrder).toEqual([]);
});
