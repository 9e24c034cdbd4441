import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('two relays per service and two payment consumers and processors, under Kafka and relay kills: per-order order holds', async () => {
  const result = await runScenario('4 scale-out', {
    system: {
      instances: {
        'order-relay': 2,
        'payment-relay': 2,
        'payment-consumer': 2,
        'payment-processor': 2,
      },
      faults: { 'relay-after-publish': 0.05 },
    },
    inject: async ({ system, acceptedSoFar, kill, killWhenRunning, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      // A relay may be restarting after its own kill point: each kill waits for a live one.
      await killWhenRunning('order-relay-1');
      await kill('kafka');
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
      await killWhenRunning('payment-relay-2');
      await killWhenRunning('payment-consumer-1');
      const atLast = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atLast + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
    },
  });

  // Per-order order on both topics and in the inbox is part of the invariants.
  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({
    'order-relay-1': 1,
    kafka: 1,
    'payment-relay-2': 1,
    'payment-consumer-1': 1,
  });
  expect(result.unexpectedRestarts).toEqual([]);
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
});
