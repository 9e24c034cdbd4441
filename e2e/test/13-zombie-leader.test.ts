import { topics } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { freeze, thaw } from '../src/faults/freeze-node.ts';
import {
  leaderOfBusiestPartition,
  partitionsLedBy,
  waitUntilInSync,
} from '../src/faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('three-node cluster: a partition leader frozen (SIGSTOP) past its session, then thawed as a zombie; it is fenced, rejoins, and nothing is lost or applied twice', async () => {
  const result = await runScenario('13 zombie leader', {
    system: { kafkaBrokers: 3, ownServers: 'a three-node cluster whose nodes it stops' },
    inject: async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
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
        const atMove = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= atMove + defaultRate * 3, {
          timeoutMs: 60_000,
          description: 'orders while the old leader is frozen',
        });
      } finally {
        thaw(stack, leader);
      }
      fault(`${leader} SIGCONT`);
      await waitUntilInSync(stack);
      fault(`${leader} back in sync`);
      const atThaw = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atThaw + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect(result.load.refused).toBe(0);
});
