import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('PostgreSQL SIGKILLed and restarted under load: 503 while down, never 500, no partial write, every role recovers by itself', async () => {
  const result = await runScenario('6 postgres restarted', {
    inject: async ({ system, acceptedSoFar, statusesSoFar, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await system.stack.kill('postgres');
      fault('postgres SIGKILL');
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

  expect(result.invariants.violations).toEqual([]);
  const statuses = Object.keys(result.load.statusCounts);
  expect(statuses.filter((status) => status !== '201' && status !== '503')).toEqual([]);
  expect(result.load.refused).toBeGreaterThan(0);
  // No role had to be restarted: each one rode out the outage on its own.
  expect(result.restarts).toEqual({});
});
