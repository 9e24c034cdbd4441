import { Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { expect, inject, it } from 'vitest';
import { createKafka } from '../../src/index.ts';
import { createKafkaRequestsMetric } from '../../src/metrics/kafka-requests.ts';

/** The sample of `kafka_requests_total` for `api` in the registry's text, or 0. */
async function requestsOf(registry: Registry, api: string): Promise<number> {
  const line = (await registry.metrics())
    .split('\n')
    .find((sample) => sample.startsWith(`kafka_requests_total{api="${api}"} `));
  return Number(line?.split(' ')[1] ?? 0);
}

it('counts the requests of every producer and admin of the process, by API', async () => {
  const registry = new Registry();
  const kafka = await createKafka({
    clientId: 'requests-test',
    brokers: Stack.open(inject('stackName')).kafkaBrokers,
    logger: pino({ level: 'silent' }),
    onRequest: createKafkaRequestsMetric(registry),
  });
  const admin = kafka.createAdmin();
  const producer = kafka.createProducer({ allowAutoTopicCreation: false });
  try {
    await admin.connect();
    await admin.listTopics();
    await producer.connect();
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
  expect(await requestsOf(registry, 'Metadata')).toBeGreaterThanOrEqual(1);
  // The idempotent producer asks for its producer id when it connects.
  expect(await requestsOf(registry, 'InitProducerId')).toBeGreaterThanOrEqual(1);
});
