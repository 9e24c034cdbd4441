import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { waitUntilInSync } from '../src/faults/kafka-cluster.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';
import type { System } from '../src/system.ts';

/** Outbox rows Kafka's refusals were counted against, or that were set aside: none may be. */
async function refusedRows(system: System): Promise<number> {
  let total = 0;
  for (const db of [system.orderDb, system.paymentDb]) {
    const { rows } = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM outbox_event WHERE failed_at IS NOT NULL OR publish_attempts > 0',
    );
    total += Number(rows[0]?.n ?? 0);
  }
  return total;
}

async function unpublishedRows(system: System): Promise<number> {
  const { rows } = await system.orderDb.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL',
  );
  return Number(rows[0]?.n ?? 0);
}

it('three-node cluster: two nodes stopped, in-sync replicas below the minimum; writes go on into the outbox, nothing is set aside, all drains after one node is back', async () => {
  let refusedDuringOutage = -1;
  let backlogDuringOutage = 0;
  const result = await runScenario('11 below min isr', {
    system: { kafkaBrokers: 3, ownServers: 'a three-node cluster whose nodes it stops' },
    inject: async ({ system, acceptedSoFar, fault }) => {
      const { stack } = system;
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      // Stopped (not killed) one after the other: each controlled shutdown takes its node out
      // of the in-sync replicas while a majority of the voters still commits the change.
      await stack.stop('kafka-1');
      await stack.stop('kafka-2');
      fault('kafka-1 and kafka-2 stopped: one in-sync replica, two required');
      // The last node applies the ISR shrink it voted for a moment after the stop returns.
      await pollUntil(
        async () =>
          (await stack.partitionLeaders()).every((partition) => partition.isr.length <= 1),
        { timeoutMs: 15_000, intervalMs: 250, description: 'one in-sync replica per partition' },
      );
      const atStop = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atStop + defaultRate * 5, {
        timeoutMs: 60_000,
        description: 'orders while Kafka refuses writes',
      });
      backlogDuringOutage = await unpublishedRows(system);
      refusedDuringOutage = await refusedRows(system);
      await stack.start('kafka-1');
      fault('kafka-1 started: two in-sync replicas again');
      const atStart = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atStart + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
      await stack.start('kafka-2');
      await waitUntilInSync(stack);
      fault('kafka-2 started, every replica in sync');
    },
  });

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  expect(result.load.refused).toBe(0);
  // The orders accepted meanwhile waited in the outbox; Kafka's refusals were outages, not
  // refusals of the rows (retried, never counted or set aside).
  expect(backlogDuringOutage).toBeGreaterThanOrEqual(defaultRate * 4);
  expect(refusedDuringOutage).toBe(0);
});
