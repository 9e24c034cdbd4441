import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { runScenario } from '../src/scenario.ts';
import { postgresOutage } from '../src/server-outages.ts';

it('PostgreSQL SIGKILLed and restarted under load: 503 while down, never 500, no partial write, every role recovers by itself', async () => {
  const result = await runScenario('6 postgres restarted', {
    system: { ownServers: 'it restarts PostgreSQL' },
    unavailableIsFinal: true,
    inject: postgresOutage,
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
