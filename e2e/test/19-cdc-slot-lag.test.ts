import { pollUntil } from '@outbox-inbox/infra';
import { ConnectApi } from '@outbox-inbox/outbox/cdc';
import { expect, it } from 'vitest';
import { readCdcSignals, relayOf } from '../src/cdc-probes.ts';
import { stalledWorker } from '../src/gray-failures.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { defaultRate, runScenario } from '../src/scenario.ts';

const connector = 'order-service-outbox';

it('CDC relay: the connector paused while orders flow; the slot lag and a stalled relay are seen, then the WAL it kept drains', async () => {
  let signal = '';
  const result = await runScenario('19 cdc slot lag', {
    system: {
      relayMode: 'cdc',
      ownServers: 'it runs Kafka Connect, whose connector it pauses',
      // The relay role reports a slot that confirms nothing as a stall after 3 s.
      settings: { WORKER_STALL_AFTER_MS: '3000' },
    },
    inject: async ({ system, acceptedSoFar, fault, note }) => {
      await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      const api = new ConnectApi(system.stack.connectUrl);
      await api.pause(connector);
      fault(`connector ${connector} paused`);
      const relay = relayOf(system, 'order');
      const behind = await pollUntil(
        async () => {
          const signals = await readCdcSignals(relay);
          return signals !== undefined && signals.running === 0 && signals.lagSeconds >= 8
            ? signals
            : undefined;
        },
        { timeoutMs: 60_000, description: 'the slot lag while the connector is paused' },
      );
      signal =
        (await pollUntil(() => stalledWorker(system, ['order-relay'], 'outbox-relay'), {
          timeoutMs: 30_000,
          description: 'the order relay role stalled',
        })) ?? '';
      note(
        `slot ${behind.lagSeconds.toFixed(0)} s / ${behind.lagBytes} bytes behind, connector running 0; ${signal}`,
      );
      await api.resume(connector);
      fault(`connector ${connector} resumed`);
      await pollUntil(async () => (await readCdcSignals(relay))?.running === 1, {
        timeoutMs: 60_000,
        description: 'the connector running again',
      });
      const atResume = acceptedSoFar();
      await pollUntil(() => acceptedSoFar() >= atResume + defaultRate * 2, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(signal).toMatch(/degraded: outbox-relay/);
  expect(result.load.refused).toBe(0);
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
