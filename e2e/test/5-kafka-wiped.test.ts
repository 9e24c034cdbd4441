import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { topicDeclarations } from '@outbox-inbox/contracts';
import { findRepoRoot, pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';
import { provisionSystemTopics, type System } from '../src/system.ts';
import { topicHighWatermark } from '../src/topic-reader.ts';

/**
 * The operator's move after Kafka lost its data: replay the outbox with the library's CLI.
 * Returns how many events it says it queued.
 */
function replayOutbox(system: System, database: 'orders' | 'payments'): number {
  const cli = path.join(findRepoRoot(), 'packages', 'outbox', 'src', 'cli', 'outbox.ts');
  const output = execFileSync(process.execPath, [cli, 'replay', '--from-id', '1', '--json'], {
    env: { ...process.env, DATABASE_URL: system.stack.postgresUrl(database) },
    encoding: 'utf8',
  });
  const { queued } = JSON.parse(output) as { queued?: unknown };
  if (typeof queued !== 'number') throw new Error(`replay printed no count: ${output}`);
  return queued;
}

/** Rows the replay may queue again: published, not skipped by an operator. */
async function publishedRows(pool: System['orderDb']): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NOT NULL AND skipped_at IS NULL',
  );
  return Number(rows[0]?.n ?? 0);
}

it('Kafka lost its data: replaying the outbox restores every downstream effect, with no double effect', async () => {
  const consumers = ['payment-consumer', 'order-consumer'];
  const relays = ['order-relay', 'payment-relay'];
  const replayed: Record<string, { published: number; queued: number }> = {};
  const messagesAfterWipe: Record<string, number> = {};
  const result = await runScenario('5 kafka wiped', {
    system: { ownServers: 'it wipes Kafka' },
    inject: async ({ system, supervisor, acceptedSoFar, killWhenRunning, stop, fault }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      // Consumers fall behind, so the wipe destroys events that were published and never read.
      for (const consumer of consumers) {
        supervisor.hold(consumer);
        await killWhenRunning(consumer);
      }
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
        await stop(relay);
      }
      await system.stack.wipe('kafka');
      fault('kafka wiped (storage deleted, restarted empty)');
      // Provisioning must create both topics again: the wipe really emptied the broker.
      const recreated = await provisionSystemTopics(system.stack.kafkaBrokers);
      expect(recreated.sort()).toEqual(topicDeclarations.map((topic) => topic.name).sort());
      for (const topic of topicDeclarations) {
        messagesAfterWipe[topic.name] = await topicHighWatermark(
          system.stack.kafkaBrokers,
          topic.name,
        );
      }
      // With the relays stopped, the published rows stand still while the replay counts them.
      for (const [database, pool] of [
        ['orders', system.orderDb],
        ['payments', system.paymentDb],
      ] as const) {
        const published = await publishedRows(pool);
        replayed[database] = { published, queued: replayOutbox(system, database) };
      }
      fault('outbox replayed');
      for (const component of [...relays, ...consumers]) supervisor.release(component);
      const atReplay = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atReplay + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  // The wipe emptied the broker: the topics held nothing before the replay.
  expect(messagesAfterWipe).toEqual(
    Object.fromEntries(topicDeclarations.map((topic) => [topic.name, 0])),
  );
  // The replay queued every published row of each outbox, and there were some.
  for (const database of ['orders', 'payments']) {
    expect(replayed[database]?.published, database).toBeGreaterThan(0);
    expect(replayed[database]?.queued, database).toBe(replayed[database]?.published);
  }
  expect(result.kills).toEqual({ 'payment-consumer': 1, 'order-consumer': 1 });
  expect(result.unexpectedRestarts).toEqual([]);
  // Events handled before the wipe came again with the replay and were dropped as duplicates.
  expect(
    result.counts.duplicatesDroppedByInbox + result.counts.duplicatesDroppedByDedup,
  ).toBeGreaterThan(0);
});
