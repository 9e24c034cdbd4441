import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { readCounter } from '../src/process-counters.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';
import { kafkaOutage } from '../src/server-outages.ts';

it('Kafka SIGKILLed mid-flight: the API keeps answering 201, the backlog grows, then drains', async () => {
  let failuresBefore = 0;
  const result = await runScenario('1 kafka killed', {
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
});
