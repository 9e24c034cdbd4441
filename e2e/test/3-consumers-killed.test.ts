import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('payment consumer, inbox processor and order consumer SIGKILLed mid-batch and restarted', async () => {
  const victims = ['payment-consumer', 'payment-processor', 'order-consumer'];
  const result = await runScenario('3 consumers killed', {
    system: { relayCrashAfterPublish: 0.05 },
    inject: async ({ system, acceptedSoFar, fault }) => {
      for (let round = 1; round <= 2; round++) {
        for (const victim of victims) {
          const before = acceptedSoFar();
          await pollUntil(() => acceptedSoFar() >= before + defaultRate, {
            timeoutMs: 60_000,
            description: 'traffic',
          });
          await pollUntil(() => system.stack.isRunning(victim), {
            timeoutMs: 90_000,
            description: `${victim} back`,
          });
          await system.stack.kill(victim);
          fault(`${victim} SIGKILL #${round}`);
        }
      }
    },
  });

  expect(result.invariants.violations).toEqual([]);
  for (const victim of victims) expect(result.restarts[victim] ?? 0).toBeGreaterThanOrEqual(2);
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
});
