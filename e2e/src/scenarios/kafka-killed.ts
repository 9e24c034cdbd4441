import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { readCounter } from '../process-counters.ts';
import { defaultRate, runScenario } from '../scenario.ts';
import { kafkaOutage } from '../server-outages.ts';
import { onClient, type KafkaClientName } from './kafka-client.ts';

/** Scenario 1: Kafka SIGKILLed mid-flight, with the services on `client`. */
export async function kafkaKilled(client: KafkaClientName): Promise<void> {
  const { name, settings } = onClient('1 kafka killed', client);
  let failuresBefore = 0;
  const result = await runScenario(name, {
    system: { settings, ownServers: 'it kills Kafka' },
    inject: async (context) => {
      const relayPort = context.system.roles.find((role) => role.name === 'order-relay')?.port ?? 0;
      const relayFailures = () => readCounter(relayPort, 'outbox_publish_failures_total');
      failuresBefore = await relayFailures();
      // Down at least until a send of claimed rows failed (the relay's send timeout passed): the
      // batch in flight at the kill must be rolled back and sent again, not marked published.
      await kafkaOutage(context, () =>
        pollUntil(async () => (await relayFailures()) > failuresBefore, {
          timeoutMs: 60_000,
          description: 'a failed send by the order relay while Kafka is down',
        }),
      );
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ kafka: 1 });
  expect(result.load.refused).toBe(0);
  // The events of the orders accepted while Kafka was down waited in the outbox.
  expect(result.counts.largestBacklog).toBeGreaterThanOrEqual(defaultRate * 4);
  // Every role rode out the outage in its process: none died and was restarted.
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
}
