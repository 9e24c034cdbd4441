import { topics } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import {
  leaderOfBusiestPartition,
  partitionsLedBy,
  waitUntilInSync,
} from '../faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { traffic } from '../scenario.ts';
import type { ServiceClients } from './kafka-client.ts';
import { runOnThreeNodeCluster } from './three-node-cluster.ts';

/** Scenario 10: on a three-node cluster, the leader of the busiest partition of each topic SIGKILLed, with each service on its client (`clients`). */
export async function leaderKilled(clients: ServiceClients): Promise<void> {
  const killed: string[] = [];
  /** The topics that lost a partition leader to a kill. */
  const leaderLost = new Set<string>();
  const contractTopics: readonly string[] = [topics.orderEvents, topics.paymentEvents];
  const result = await runOnThreeNodeCluster(
    '10 leader killed',
    clients,
    async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      // A node leads partitions of several topics: one kill takes a leader from each of them,
      // and a topic whose leaders it missed gets a kill of its own.
      for (const topic of contractTopics) {
        if (leaderLost.has(topic)) continue;
        await traffic({ acceptedSoFar }, 2);
        const leader = await leaderOfBusiestPartition(stack, topic);
        const led = (await stack.partitionLeaders())
          .filter((one) => one.leader === leader && contractTopics.includes(one.topic))
          .map((one) => one.topic);
        await stack.kill(leader);
        killed.push(leader);
        for (const one of led) leaderLost.add(one);
        fault(
          `${leader} (leader of the busiest ${topic} partition, and of partitions of ${[...new Set(led)].join(' and ')}) SIGKILL`,
        );
        // Once its broker session expires, the controller fences it and the in-sync replicas on
        // the two live nodes lead; they keep the quorum and the relays go on.
        await pollUntil(async () => (await partitionsLedBy(stack, leader)) === 0, {
          timeoutMs: 60_000,
          intervalMs: 500,
          description: `leadership moved off the dead ${leader}`,
        });
        await traffic({ acceptedSoFar }, 3, 'orders while the leader is dead');
        await stack.start(leader);
        await waitUntilInSync(stack);
        fault(`${leader} restarted and back in sync`);
      }
    },
  );

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect([...leaderLost].sort()).toEqual([...contractTopics].sort());
  expect(killed.length).toBeGreaterThanOrEqual(1);
  expect(result.load.refused).toBe(0);
}
