import { topicDeclarations } from '@outbox-inbox/contracts';
import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';
import type { System } from '../src/system.ts';
import { topicHighWatermark } from '../src/topic-reader.ts';

/** Messages on every topic of the system, summed. */
async function messagesOnTopics(system: System): Promise<number> {
  let total = 0;
  for (const topic of topicDeclarations) {
    total += await topicHighWatermark(system.stack.kafkaBrokers, topic.name);
  }
  return total;
}

it('CDC relay: Kafka Connect SIGKILLed mid-flight three times; what it sent after its last offset flush comes again and is absorbed', async () => {
  const result = await runScenario('17 cdc connect killed', {
    system: { relayMode: 'cdc', ownServers: 'it kills Kafka Connect' },
    inject: async ({ system, acceptedSoFar, kill, fault }) => {
      let sinceStart = await messagesOnTopics(system);
      for (let round = 0; round < 3; round++) {
        const before = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= before + defaultRate * 2, {
          timeoutMs: 60_000,
          description: 'traffic',
        });
        // A kill duplicates only what Connect sent after its last offset flush: it must be
        // streaming again, not still starting its tasks, when it dies.
        await pollUntil(async () => (await messagesOnTopics(system)) > sinceStart, {
          timeoutMs: 60_000,
          intervalMs: 500,
          description: 'Kafka Connect publishing since it started',
        });
        await kill('connect');
        const atKill = acceptedSoFar();
        await pollUntil(() => acceptedSoFar() >= atKill + defaultRate, {
          timeoutMs: 60_000,
          description: 'orders while Kafka Connect is down',
        });
        await system.stack.start('connect');
        fault('connect restarted');
        sinceStart = await messagesOnTopics(system);
      }
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ connect: 3 });
  expect(result.load.refused).toBe(0);
  // Connect flushes source offsets every second while events flow every few milliseconds: a
  // SIGKILL always leaves sent events past the last flush, which the restarted task sends again.
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
