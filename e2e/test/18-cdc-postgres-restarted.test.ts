import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { runScenario } from '../src/scenario.ts';
import { postgresOutage } from '../src/server-outages.ts';

it('CDC relay: PostgreSQL SIGKILLed and restarted under load; the connector resumes from its slot, nothing lost or applied twice', async () => {
  const result = await runScenario('18 cdc postgres restarted', {
    system: { relayMode: 'cdc', ownServers: 'it restarts PostgreSQL, and runs Kafka Connect' },
    unavailableIsFinal: true,
    inject: postgresOutage,
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ postgres: 1 });
  const statuses = Object.keys(result.load.statusCounts);
  expect(statuses.filter((status) => status !== '201' && status !== '503')).toEqual([]);
  // The connector's task lost its replication connection with the server: it resumed from the
  // slot on its own (or the relay role restarted it), and no role process had to be restarted.
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
