import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { readCdcSignals, relayOf } from '../src/cdc-probes.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { runScenario } from '../src/scenario.ts';
import { kafkaOutage } from '../src/server-outages.ts';

it('CDC relay: Kafka SIGKILLed mid-flight; the API keeps answering 201, the slot keeps the WAL, Debezium drains it', async () => {
  const result = await runScenario('16 cdc kafka killed', {
    system: { relayMode: 'cdc', ownServers: 'it kills Kafka, and runs Kafka Connect' },
    inject: async (context) => {
      // Down at least until nothing could be sent for a while: the order service's slot is
      // seconds behind, and PostgreSQL keeps what it has not confirmed.
      await kafkaOutage(context, async () => {
        const behind = await pollUntil(
          async () => {
            const signals = await readCdcSignals(relayOf(context.system, 'order'));
            return signals !== undefined && signals.lagSeconds >= 3 ? signals : undefined;
          },
          { timeoutMs: 60_000, description: 'the order slot behind while Kafka is down' },
        );
        context.note(
          `order slot ${behind.lagSeconds.toFixed(0)} s / ${behind.lagBytes} bytes behind`,
        );
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ kafka: 1 });
  expect(result.load.refused).toBe(0);
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
