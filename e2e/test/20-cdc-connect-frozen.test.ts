import { expect, it } from 'vitest';
import { readCdcSignals, relayOf } from '../src/cdc-probes.ts';
import { freezeServer, stalledWorker, type GrayFailure } from '../src/gray-failures.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { runScenario } from '../src/scenario.ts';

it('CDC relay: Kafka Connect frozen (SIGSTOP) under load, thawed later; the stalled relay, the slot lag and a connector not seen running show it meanwhile, then it catches up', async () => {
  let frozen: GrayFailure | undefined;
  const result = await runScenario('20 cdc connect frozen', {
    system: {
      relayMode: 'cdc',
      ownServers: 'it freezes Kafka Connect',
      // The relay role reports a slot that confirms nothing as a stall after 3 s.
      settings: { WORKER_STALL_AFTER_MS: '3000' },
    },
    inject: async (context) => {
      const relay = relayOf(context.system, 'order');
      // A frozen worker answers nothing, not even "failed": the relay role has to see it from
      // PostgreSQL's side (the slot confirms nothing) and from a status that never comes.
      frozen = await freezeServer(context, 'connect', async () => {
        const signals = await readCdcSignals(relay);
        if (signals === undefined || signals.running !== 0 || signals.lagSeconds < 5) return;
        const stalled = await stalledWorker(context.system, ['order-relay'], 'outbox-relay');
        return stalled && `${stalled}; slot ${signals.lagSeconds.toFixed(0)} s behind`;
      });
      context.note(`Kafka Connect frozen: ${frozen.signal}`);
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(frozen?.signal).toMatch(/order-relay \/health\/ready degraded: outbox-relay/);
  expect(result.load.refused).toBe(0);
  expect(result.restarts).toEqual({});
  expect(result.unexpectedRestarts).toEqual([]);
});
