import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('order relay SIGKILLed repeatedly, also between the Kafka ack and the commit: duplicates delivered and absorbed', async () => {
  const result = await runScenario('2 relay killed', {
    // Every relay has a 10 % chance per batch to SIGKILL itself after Kafka acked it and
    // before published_at commits: the exact moment that makes a duplicate.
    system: { faults: { 'relay-after-publish': 0.1 } },
    inject: async ({ acceptedSoFar, killWhenRunning }) => {
      for (let round = 1; round <= 3; round++) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate * 2, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        await killWhenRunning('order-relay');
      }
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ 'order-relay': 3 });
  expect(result.injectedDeaths.length).toBeGreaterThan(0);
  expect(result.unexpectedRestarts).toEqual([]);
  // Re-sent batches reached the topic twice, and nothing was applied twice (invariants above).
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
});
