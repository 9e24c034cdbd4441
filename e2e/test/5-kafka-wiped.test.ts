import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { findRepoRoot, pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { defaultRate, runScenario } from '../src/scenario.ts';
import { createTopics, type System } from '../src/system.ts';

/** The operator's move after Kafka lost its data: replay the outbox with the library's CLI. */
function replayOutbox(system: System, database: 'orders' | 'payments'): string {
  const cli = path.join(findRepoRoot(), 'packages', 'outbox', 'src', 'cli', 'replay.ts');
  return execFileSync(process.execPath, [cli, '--from-id', '1'], {
    env: { ...process.env, DATABASE_URL: system.stack.postgresUrl(database) },
    encoding: 'utf8',
  });
}

it('Kafka lost its data: replaying the outbox restores every downstream effect, with no double effect', async () => {
  const consumers = ['payment-consumer', 'order-consumer'];
  const relays = ['order-relay', 'payment-relay'];
  const result = await runScenario('5 kafka wiped', {
    inject: async ({ system, supervisor, acceptedSoFar, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      // Consumers fall behind, so the wipe destroys events that were published and never read.
      for (const consumer of consumers) {
        supervisor.hold(consumer);
        await system.stack.kill(consumer);
      }
      fault('consumers stopped');
      const atStop = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atStop + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'unread events',
      });
      // The runbook's order: stop the relays, then replay, then start them again. A relay that
      // kept publishing into the empty topic would put an order's later events ahead of the
      // replayed earlier ones.
      for (const relay of relays) {
        supervisor.hold(relay);
        await system.stack.stop(relay);
      }
      await system.stack.wipe('kafka');
      fault('kafka wiped (storage deleted, restarted empty)');
      await createTopics(system.stack.kafkaBrokers, 3);
      replayOutbox(system, 'orders');
      replayOutbox(system, 'payments');
      fault('outbox replayed');
      for (const component of [...relays, ...consumers]) supervisor.release(component);
      const atReplay = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atReplay + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expect(result.invariants.violations).toEqual([]);
  // Events handled before the wipe came again with the replay and were dropped as duplicates.
  expect(
    result.counts.duplicatesDroppedByInbox + result.counts.duplicatesDroppedByDedup,
  ).toBeGreaterThan(0);
});
