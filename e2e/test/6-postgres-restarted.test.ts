import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('PostgreSQL SIGKILLed and restarted under load: 503 while down, never 500, no partial write, every role recovers by itself', async () => {
  const result = await runScenario('6 postgres restarted', {
    inject: async ({ system, acceptedSoFar, statusesSoFar, kill, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await kill('postgres');
      const refusedBefore = statusesSoFar()['503'] ?? 0;
      await pollUntil(() => (statusesSoFar()['503'] ?? 0) >= refusedBefore + defaultRate, {
        timeoutMs: 60_000,
        description: '503s while PostgreSQL is down',
      });
      await system.stack.start('postgres');
      fault('postgres restarted');
      const atRestart = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atRestart + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ postgres: 1 });
  const statuses = Object.keys(result.load.statusCounts);
  expect(statuses.filter((status) => status !== '201' && status !== '503')).toEqual([]);
  // Each 503 was a final answer: the request created nothing (no phantom, in the invariants).
  // No role had to be restarted: each one rode out the outage on its own.
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
