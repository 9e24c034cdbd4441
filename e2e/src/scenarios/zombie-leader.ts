import { topics } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import { freeze, thaw } from '../faults/freeze-node.ts';
import {
  leaderOfBusiestPartition,
  partitionsLedBy,
  waitUntilInSync,
} from '../faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { traffic } from '../scenario.ts';
import type { ServiceClients } from './kafka-client.ts';
import { runOnThreeNodeCluster } from './three-node-cluster.ts';

/** Scenario 13: a partition leader frozen past its session and thawed as a zombie, with each service on its client (`clients`). */
export async function zombieLeader(clients: ServiceClients): Promise<void> {
  const result = await runOnThreeNodeCluster(
    '13 zombie leader',
    clients,
    async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      await traffic({ acceptedSoFar }, 2);
      const leader = await leaderOfBusiestPartition(stack, topics.orderEvents);
      freeze(stack, leader);
      fault(`${leader} (leader of the busiest ${topics.orderEvents} partition) SIGSTOP`);
      try {
        // Frozen past its broker session: the controller fences it and moves its leadership.
        await pollUntil(async () => (await partitionsLedBy(stack, leader)) === 0, {
          timeoutMs: 60_000,
          intervalMs: 500,
          description: `leadership moved off the frozen ${leader}`,
        });
        await traffic({ acceptedSoFar }, 3, 'orders while the old leader is frozen');
      } finally {
        thaw(stack, leader);
      }
      fault(`${leader} SIGCONT`);
      await waitUntilInSync(stack);
      fault(`${leader} back in sync`);
      await traffic({ acceptedSoFar }, 2, 'traffic after');
    },
  );

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect(result.load.refused).toBe(0);
}
