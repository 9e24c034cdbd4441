import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { readCdcSignals, relayOf } from '../src/cdc-probes.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

it('CDC relay: Kafka SIGKILLed mid-flight; the API keeps answering 201, the slot keeps the WAL, Debezium drains it', async () => {
  const result = await runScenario('16 cdc kafka killed', {
    system: { relayMode: 'cdc' },
    inject: async ({ system, acceptedSoFar, kill, fault, note }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      await kill('kafka');
      const atKill = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atKill + defaultRate * 5, {
        timeoutMs: 60_000,
        description: 'orders while Kafka is down',
      });
      // Nothing could be sent: the order service's slot falls behind.
      const behind = await pollUntil(
        async () => {
          const signals = await readCdcSignals(relayOf(system, 'order'));
          return signals !== undefined && signals.lagSeconds >= 3 ? signals : undefined;
        },
        { timeoutMs: 60_000, description: 'the order slot behind while Kafka is down' },
      );
      note(`order slot ${behind.lagSeconds.toFixed(0)} s / ${behind.lagBytes} bytes behind`);
      await system.stack.start('kafka');
      fault('kafka restarted');
      const atRestart = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atRestart + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ kafka: 1 });
  expect(result.load.refused).toBe(0);
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
