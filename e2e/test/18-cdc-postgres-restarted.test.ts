import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('CDC relay: PostgreSQL SIGKILLed and restarted under load; the connector resumes from its slot, nothing lost or applied twice', async () => {
  const result = await runScenario('18 cdc postgres restarted', {
    system: { relayMode: 'cdc' },
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
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
