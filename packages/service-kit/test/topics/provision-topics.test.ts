import { randomUUID } from 'node:crypto';
import { pollUntil, Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import type { KafkaAdmin } from '@outbox-inbox/outbox/kafka-port';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { provisionTopics, TopicProvisioningError } from '../../src/index.ts';

const logger = pino({ level: 'silent' });
/** kafkajs's own admin, to read what provisioning left on the broker. */
let admin: Admin;
/** The port's admin, which provisioning drives. */
let portAdmin: KafkaAdmin;

beforeAll(async () => {
  const stack = Stack.open(inject('stackName'));
  const kafka = new Kafka({
    clientId: 'provision-test',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  admin = kafka.admin();
  await admin.connect();
  portAdmin = kafkajsClient(kafka).createAdmin();
  await portAdmin.connect();
});
afterAll(async () => {
  await portAdmin.disconnect();
  await admin.disconnect();
});

function declared(partitions = 4) {
  return {
    name: `provision-${randomUUID().slice(0, 8)}`,
    partitions,
    replicationFactor: 3,
    minInsyncReplicas: 2,
    configs: { 'retention.ms': '3600000', 'message.timestamp.type': 'CreateTime' },
  };
}

async function configOf(topic: string, name: string): Promise<string | undefined> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }],
  });
  return described.resources[0]?.configEntries.find((entry) => entry.configName === name)
    ?.configValue;
}

describe('provisionTopics', () => {
  it('creates a missing topic as declared, with the replication of a one-broker cluster', async () => {
    const spec = declared();
    const result = await provisionTopics(portAdmin, [spec], { logger });
    expect(result.created).toEqual([spec.name]);
    const { topics } = await admin.fetchTopicMetadata({ topics: [spec.name] });
    expect(topics[0]?.partitions).toHaveLength(4);
    expect(topics[0]?.partitions.every((p) => p.replicas.length === 1)).toBe(true);
    expect(await configOf(spec.name, 'retention.ms')).toBe('3600000');
    expect(await configOf(spec.name, 'min.insync.replicas')).toBe('1');
    // A second run (every migrate) changes nothing.
    expect(await provisionTopics(portAdmin, [spec], { logger })).toEqual({
      created: [],
      updated: [],
      unchanged: [spec.name],
    });
  });

  it('sets drifted configs back to the declaration', async () => {
    const spec = declared();
    await provisionTopics(portAdmin, [spec], { logger });
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: spec.name,
          configEntries: [{ name: 'retention.ms', value: '60000' }],
        },
      ],
    });
    // The controller answers alterConfigs once it has committed the change; the broker that
    // describeConfigs asks applies it from the metadata log a moment later. Provisioning must
    // see the drift to be tested on it.
    await pollUntil(async () => (await configOf(spec.name, 'retention.ms')) === '60000', {
      timeoutMs: 10_000,
      description: 'the drifted retention.ms to be visible on the broker',
    });
    const result = await provisionTopics(portAdmin, [spec], { logger });
    expect(result.updated).toEqual([spec.name]);
    // The same lag the other way: the restored value reaches the broker shortly after.
    await pollUntil(async () => (await configOf(spec.name, 'retention.ms')) === '3600000', {
      timeoutMs: 10_000,
      description: 'retention.ms restored to the declared 3600000',
    });
  });

  it('refuses a topic that exists with fewer partitions than declared', async () => {
    const spec = declared(6);
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: spec.name, numPartitions: 2 }],
    });
    const error = await provisionTopics(portAdmin, [spec], { logger }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TopicProvisioningError);
    expect(String(error)).toMatch(/has 2 partitions, the contract declares 6/);
  });

  it('refuses a replication factor above the broker count before creating anything', async () => {
    const spec = declared();
    const error = await provisionTopics(portAdmin, [spec], { logger, replicationFactor: 3 }).catch(
      (e: unknown) => e,
    );
    expect(String(error)).toMatch(/replication factor 3 is above the cluster's 1 broker/);
    expect(await admin.listTopics()).not.toContain(spec.name);
  });
});
