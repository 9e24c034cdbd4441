import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { waitUntilInSync } from '../src/faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('three-node cluster: a rolling restart under load, each node back in sync before the next; nothing is lost', async () => {
  const restarted: string[] = [];
  const result = await runScenario('12 rolling restart', {
    system: { kafkaBrokers: 3, ownServers: 'a three-node cluster whose nodes it stops' },
    inject: async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      for (const node of stack.kafkaNodes) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate * 2, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        await stack.restart(node);
        // As operators do: the next node only once this one has caught up.
        await waitUntilInSync(stack);
        restarted.push(node);
        fault(`${node} restarted and back in sync`);
      }
    },
  });

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect(restarted).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
  expect(result.load.refused).toBe(0);
});
