import { randomUUID } from 'node:crypto';
import { Stack, findFreePort, pollUntil } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { enqueue } from '@outbox-inbox/outbox';
import { createDatabase } from '@outbox-inbox/service-kit';
import { pino } from 'pino';
import { expect, inject, it } from 'vitest';
import {
  migrateDatabase,
  parseConfig,
  paymentService,
  type PaymentDatabase,
} from '../../src/index.ts';

it('answers /health/ready 200 "degraded", naming the worker and why, while its relay has rows and no progress', async () => {
  const stack = Stack.open(inject('stackName'));
  const url = await stack.createDatabase(`payments_stall_${randomUUID().slice(0, 8)}`);
  const logger = pino({ level: 'silent' });
  await migrateDatabase({ url, logger });
  const port = await findFreePort();
  const config = parseConfig(
    {
      DATABASE_URL: url,
      HOST: '127.0.0.1',
      PORT: String(port),
      // Nothing listens there: every send is refused, like a Kafka that is down.
      KAFKA_BROKERS: '127.0.0.1:1',
      WORKER_STALL_AFTER_MS: '1000',
    },
    { needsKafka: true },
  );
  const db = createDatabase<PaymentDatabase>({ url, poolSize: 2, logger });
  await db.transaction().execute((trx) =>
    enqueue(trx, {
      eventType: 'PaymentSucceeded',
      aggregateType: 'payment',
      aggregateId: 'p-1',
      topic: 'payment.events',
      partitionKey: 'o-1',
      payload: {},
    }),
  );
  const service = await paymentService.start({ config, roles: ['api', 'relay'], logger });
  try {
    const ready = () => fetch(`http://127.0.0.1:${port}/health/ready`);
    const degraded = await pollUntil(
      async () => {
        const response = await ready();
        const body = (await response.json()) as { status: string };
        return body.status === 'degraded' && { code: response.status, body };
      },
      { timeoutMs: 60_000, description: 'readiness to turn degraded' },
    );
    expect(degraded.code).toBe(200);
    expect(degraded.body).toMatchObject({
      checks: {
        database: 'ok',
        workers: {
          'outbox-relay': {
            status: 'stalled',
            reason: expect.stringMatching(/^has had work for \d+ s without progress; last error: /),
          },
        },
      },
    });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^outbox_worker_stalled\{worker="outbox-relay"\} 1$/m);
  } finally {
    await service.stop();
    await db.destroy();
  }
});
