import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('two relays per service and two payment consumers and processors, under Kafka and relay kills: per-order order holds', async () => {
  const result = await runScenario('4 scale-out', {
    system: {
      orderRelays: 2,
      paymentRelays: 2,
      paymentConsumers: 2,
      paymentProcessors: 2,
      relayCrashAfterPublish: 0.05,
    },
    inject: async ({ system, acceptedSoFar, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await system.stack.kill('order-relay-1');
      fault('order-relay-1 SIGKILL');
      await system.stack.kill('kafka');
      fault('kafka SIGKILL');
      const atKill = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atKill + defaultRate * 3, {
        timeoutMs: 60_000,
        description: 'orders while Kafka is down',
      });
      await system.stack.start('kafka');
      fault('kafka restarted');
      const atRestart = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atRestart + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await system.stack.kill('payment-relay-2');
      fault('payment-relay-2 SIGKILL');
      await system.stack.kill('payment-consumer-1');
      fault('payment-consumer-1 SIGKILL');
      const atLast = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atLast + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
    },
  });

  // Per-order order on both topics and in the inbox is part of the invariants.
  expect(result.invariants.violations).toEqual([]);
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
});
