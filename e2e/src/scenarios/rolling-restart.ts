import { expect } from 'vitest';
import { waitUntilInSync } from '../faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { traffic } from '../scenario.ts';
import type { ServiceClients } from './kafka-client.ts';
import { runOnThreeNodeCluster } from './three-node-cluster.ts';

/** Scenario 12: a rolling restart of a three-node cluster under load, with each service on its client (`clients`). */
export async function rollingRestart(clients: ServiceClients): Promise<void> {
  const restarted: string[] = [];
  const result = await runOnThreeNodeCluster(
    '12 rolling restart',
    clients,
    async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      for (const node of stack.kafkaNodes) {
        await traffic({ acceptedSoFar }, 2);
        await stack.restart(node);
        // As operators do: the next node only once this one has caught up.
        await waitUntilInSync(stack);
        restarted.push(node);
        fault(`${node} restarted and back in sync`);
      }
    },
  );

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect(restarted).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
  expect(result.load.refused).toBe(0);
}
