import { expect, it } from 'vitest';
import {
  apiUnavailable,
  freezeServer,
  hangingHandlers,
  stalledWorker,
  zombieRelay,
  type GrayFailure,
} from '../src/gray-failures.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { runScenario } from '../src/scenario.ts';

it('gray failures: Kafka, PostgreSQL and a relay frozen and thawed, handlers that hang; each seen while it lasts, each recovered', async () => {
  const seen: Record<string, GrayFailure> = {};
  let zombieBatch: readonly string[] = [];
  let timedOutRows = 0;
  const result = await runScenario('9 gray failures', {
    system: {
      ownServers: 'it freezes Kafka and PostgreSQL',
      // A second order relay takes over the frozen one's rows.
      instances: { 'order-relay': 2 },
      faults: { 'relay-freeze-after-publish': 1, 'processor-hang': 1 },
      settings: {
        WORKER_STALL_AFTER_MS: '2000',
        PROCESSOR_HANDLER_TIMEOUT_MS: '3000',
        // The hang lasts a few handler timeouts: no row may use up its attempts meanwhile.
        PROCESSOR_MAX_ATTEMPTS: '20',
      },
    },
    inject: async (context) => {
      const { system } = context;
      seen['kafka'] = await freezeServer(context, 'kafka', () =>
        stalledWorker(system, ['order-relay-1', 'order-relay-2'], 'outbox-relay'),
      );
      seen['postgres'] = await freezeServer(context, 'postgres', () => apiUnavailable(system));
      const zombie = await zombieRelay(context, 'order-relay-1', 'order-api');
      seen['relay'] = zombie;
      zombieBatch = zombie.batch;
      const hang = await hangingHandlers(context, 'payment-processor');
      seen['handler'] = hang;
      timedOutRows = hang.timedOut;
    },
  });

  expectInvariantsHeld(result.invariants);
  // No role died of the fault: each rode it out in its process.
  expect(result.unexpectedRestarts).toEqual([]);
  // Each fault was seen by the signal an operator watches, while it lasted.
  expect(seen['kafka']?.signal).toMatch(/degraded: outbox-relay has had work/);
  expect(seen['postgres']?.signal).toMatch(/order-api \/health\/ready unavailable/);
  expect(seen['relay']?.signal).toMatch(/order-relay-1 does not answer/);
  expect(seen['handler']?.signal).toMatch(/payment-processor .*inbox-processor has had work/);
  expect(timedOutRows).toBeGreaterThan(0);
  // The zombie's batch went out twice (by it, then by the other relay) and was applied once.
  expect(zombieBatch.length).toBeGreaterThan(0);
  expect(result.counts.duplicatesDelivered).toBeGreaterThanOrEqual(zombieBatch.length);
  // Each recovery was measured by `cleared`, which fails the test when the held-back orders do
  // not settle in time; 0 s is a valid answer (a freeze that held nothing back).
  expect(result.counts.recoverySeconds).not.toBeNull();
});
