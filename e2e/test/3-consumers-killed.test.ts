import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { readInjectedFaults } from '../src/faults/injected-faults.ts';
import type { KillPointName } from '../src/faults/kill-points.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

/**
 * Each consumer dies inside its unit of work, once or twice, at the moments that make a
 * duplicate or a loss if its guarantee is broken. No relay fault: every duplicate here comes
 * from a consumer that stored or applied an event and died before its offset commit.
 */
const consumerKillPoints = {
  'inbox-before-store': { chance: 0.1, times: 1 },
  'inbox-before-offset-commit': { chance: 0.1, times: 2 },
  'dedup-after-apply': { chance: 0.05, times: 2 },
  'processor-before-mark': { chance: 0.05, times: 1 },
} as const satisfies Partial<Record<KillPointName, unknown>>;

it('payment consumer, inbox processor and order consumer SIGKILLed mid-batch and restarted: repeats absorbed by the inbox and by dedup', async () => {
  const victims = ['payment-consumer', 'payment-processor', 'order-consumer'];
  const result = await runScenario('3 consumers killed', {
    system: { faults: consumerKillPoints },
    // A processor killed mid-attempt holds its row for the attempt's lease (the processor's
    // handler timeout, 20 s) before another claims it: the drain gets that on top.
    drainBoundMs: 65_000,
    inject: async ({ system, acceptedSoFar, killWhenRunning }) => {
      for (const victim of victims) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        await killWhenRunning(victim);
      }
      // Load goes on until every kill point struck at least once.
      await pollUntil(
        () => {
          const struck = new Set(readInjectedFaults(system.faultLog).map((death) => death.point));
          return Object.keys(consumerKillPoints).every((point) =>
            struck.has(point as KillPointName),
          );
        },
        { timeoutMs: 90_000, description: 'a death at every consumer kill point' },
      );
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual(Object.fromEntries(victims.map((victim) => [victim, 1])));
  const deathsAt = (point: KillPointName) =>
    result.injectedDeaths.filter((death) => death.point === point).length;
  for (const [point, { times }] of Object.entries(consumerKillPoints)) {
    expect(deathsAt(point as KillPointName), point).toBeGreaterThan(0);
    expect(deathsAt(point as KillPointName), point).toBeLessThanOrEqual(times);
  }
  expect(result.unexpectedRestarts).toEqual([]);
  // Batches stored (or applied) and never committed came again, and were dropped.
  expect(result.counts.duplicatesDroppedByInbox).toBeGreaterThan(0);
  expect(result.counts.duplicatesDroppedByDedup).toBeGreaterThan(0);
});
