import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { readInjectedFaults } from '../src/faults/injected-faults.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

const deaths = 3;

it('order-api SIGKILLed after POST /orders committed and before its answer: clients retry with their Idempotency-Key, no order is created twice or lost', async () => {
  const result = await runScenario('14 order-api killed', {
    // The api kills itself after the commit of an order and before its 201 leaves, a few
    // times; its clients see a dropped connection and retry with the same key.
    system: { faults: { 'api-after-order-commit': { chance: 0.05, times: deaths } } },
    inject: async ({ system, acceptedSoFar }) => {
      await pollUntil(() => readInjectedFaults(system.faultLog).length >= deaths, {
        timeoutMs: 90_000,
        description: `${deaths} deaths of order-api after a commit`,
      });
      const atLast = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atLast + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after the last death',
      });
    },
  });

  // No phantom order (a commit without a 201 that the retry then created again), none lost.
  expectInvariantsHeld(result.invariants);
  expect(result.injectedDeaths.map((death) => death.component)).toEqual(
    Array.from({ length: deaths }, () => 'order-api'),
  );
  expect(result.load.retries).toBeGreaterThan(0);
  // Each death's request had committed: its retry got the first answer back, not a new order.
  expect(result.load.replayed).toBeGreaterThanOrEqual(deaths);
  expect(
    result.load.refused,
    `refused, by status: ${JSON.stringify(result.load.refusedByStatus)}`,
  ).toBe(0);
  expect(Object.values(result.load.cancelStatusCounts).reduce((a, b) => a + b, 0)).toBeGreaterThan(
    0,
  );
  expect(result.unexpectedRestarts).toEqual([]);
});
