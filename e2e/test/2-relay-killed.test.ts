import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('order relay SIGKILLed repeatedly, also between the Kafka ack and the commit: duplicates delivered and absorbed', async () => {
  const result = await runScenario('2 relay killed', {
    // Every relay has a 10 % chance per batch to SIGKILL itself after Kafka acked it and
    // before published_at commits: the exact moment that makes a duplicate.
    system: { relayCrashAfterPublish: 0.1 },
    inject: async ({ system, acceptedSoFar, fault }) => {
      for (let round = 1; round <= 3; round++) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate * 2, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        await pollUntil(() => system.stack.isRunning('order-relay'), {
          timeoutMs: 90_000,
          description: 'relay back',
        });
        await system.stack.kill('order-relay');
        fault(`order-relay SIGKILL #${round}`);
      }
    },
  });

  expect(result.invariants.violations).toEqual([]);
  expect(result.restarts['order-relay'] ?? 0).toBeGreaterThanOrEqual(3);
  // Re-sent batches reached the topic twice, and nothing was applied twice (invariants above).
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
});
