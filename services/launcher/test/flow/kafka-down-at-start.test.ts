import { randomUUID } from 'node:crypto';
import { Stack, pollUntil } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { orderService, parseConfig } from '@outbox-inbox/order-service';
import { pino } from 'pino';
import type { RunningService } from '@outbox-inbox/service-kit';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { migrateService } from '../../src/system/migrate-service.ts';

const stack = Stack.open(inject('stackName'));
let orders: RunningService | undefined;
afterAll(async () => {
  await orders?.stop();
  if (!stack.isRunning('kafka')) await stack.start('kafka');
});

describe('order-service with every role in one process, started while Kafka is down', () => {
  it('is ready and accepts orders at once; the outbox drains when Kafka is back', async () => {
    const url = await stack.createDatabase(`kafka_down_${randomUUID().slice(0, 8)}`);
    const logger = pino({ level: process.env['FLOW_LOG_LEVEL'] ?? 'silent' });
    // Migrate as a deployment does, topics included: the relay must find order.events once
    // Kafka is back, whichever test file ran first on this stack.
    await migrateService(orderService, url, stack.kafkaBrokers);
    await stack.kill('kafka');

    orders = await orderService.start({
      config: parseConfig(
        {
          DATABASE_URL: url,
          KAFKA_BROKERS: stack.kafkaBrokers.join(','),
          HOST: '127.0.0.1',
          PORT: '0',
          CONSUMER_GROUP_ID: `kafka-down-${randomUUID()}`,
        },
        { needsKafka: true },
      ),
      roles: orderService.roles,
      logger,
    });
    expect((await fetch(`${orders.url}/health/ready`)).status).toBe(200);
    const created = await fetch(`${orders.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: 'c', amount: 100, currency: 'EUR' }),
    });
    expect(created.status).toBe(201);
    const metrics = async () => (await fetch(`${orders?.url}/metrics`)).text();
    // Polled: the backlog gauges answer from a query up to a few seconds old.
    await pollUntil(async () => /^outbox_unpublished_events [1-9]/m.test(await metrics()), {
      timeoutMs: 10_000,
      intervalMs: 500,
      description: 'the unpublished order to show while Kafka is down',
    });

    await stack.start('kafka');
    await pollUntil(async () => /^outbox_unpublished_events 0$/m.test(await metrics()), {
      timeoutMs: 90_000,
      intervalMs: 500,
      description: 'the relay to drain the outbox after Kafka is back',
    });
  });
});
