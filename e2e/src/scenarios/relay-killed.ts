import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import { untilStruck } from '../faults/injected-faults.ts';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { defaultRate, runScenario } from '../scenario.ts';
import { onClient, type KafkaClientName } from './kafka-client.ts';

/** Scenario 2: the order relay SIGKILLed repeatedly, with the services on `client`. */
export async function relayKilled(client: KafkaClientName): Promise<void> {
  const { name, settings } = onClient('2 relay killed', client);
  const result = await runScenario(name, {
    // Every relay has a 10 % chance per batch to SIGKILL itself after Kafka acked it and
    // before published_at commits: the exact moment that makes a duplicate.
    system: { faults: { 'relay-after-publish': 0.1 }, settings },
    inject: async ({ system, acceptedSoFar, killWhenRunning }) => {
      for (let round = 1; round <= 3; round++) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate * 2, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        await killWhenRunning('order-relay');
      }
      // The duplicates on order.events, which payment-service's inbox must drop, come from the
      // order relay's strikes: a payment relay's would pass the count below and prove less.
      await untilStruck(system.faultLog, 'relay-after-publish', { component: 'order-relay' });
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ 'order-relay': 3 });
  expect(result.injectedDeaths.some((death) => death.component === 'order-relay')).toBe(true);
  expect(result.unexpectedRestarts).toEqual([]);
  // Re-sent batches reached the topic twice, and nothing was applied twice (invariants above).
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
}
