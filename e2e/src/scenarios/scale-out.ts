import { pollUntil } from '@outbox-inbox/infra';
import { expect } from 'vitest';
import { untilStruck } from '../faults/injected-faults.ts';
import { expectInvariantsHeld } from '../invariants/expect-held.ts';
import { defaultRate, runScenario, type FaultContext } from '../scenario.ts';
import { onClient, type KafkaClientName } from './kafka-client.ts';

/** Scenario 4: two of each worker role, under Kafka and relay kills, with the services on `client`. */
export async function scaleOut(client: KafkaClientName): Promise<void> {
  const { name, settings } = onClient('4 scale-out', client);
  const result = await runScenario(name, {
    // The relays' injected deaths go on while the backlog drains, each costing a restart (about
    // 10 s on a busy CI machine); 45 s after the last noted fault was once too short for two
    // of them in a row on a burst of payment events.
    drainBoundMs: 90_000,
    system: {
      ownServers: 'it kills Kafka',
      instances: {
        'order-relay': 2,
        'payment-relay': 2,
        'payment-consumer': 2,
        'payment-processor': 2,
      },
      faults: { 'relay-after-publish': 0.05 },
      settings,
    },
    inject: killAcrossTheStack,
  });

  // Per-order order on both topics and in the inbox is part of the invariants.
  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({
    'order-relay-1': 1,
    kafka: 1,
    'payment-relay-2': 1,
    'payment-consumer-1': 1,
  });
  expect(result.unexpectedRestarts).toEqual([]);
  expect(result.injectedDeaths.length).toBeGreaterThan(0);
  expect(result.counts.duplicatesDelivered).toBeGreaterThan(0);
}

/**
 * Kills a relay, then Kafka under load, restarts Kafka, then kills a payment relay and a
 * consumer, and waits for the duplicates an injected relay death causes.
 */
async function killAcrossTheStack({
  system,
  acceptedSoFar,
  kill,
  killWhenRunning,
  fault,
}: FaultContext): Promise<void> {
  await pollUntil(() => acceptedSoFar() >= defaultRate * 2, {
    timeoutMs: 60_000,
    description: 'traffic',
  });
  // A relay may be restarting after its own kill point: each kill waits for a live one.
  await killWhenRunning('order-relay-1');
  await kill('kafka');
  const atKill = acceptedSoFar();
  await pollUntil(() => acceptedSoFar() >= atKill + defaultRate * 3, {
    timeoutMs: 60_000,
    description: 'orders while Kafka is down',
  });
  await system.stack.start('kafka');
  fault('kafka restarted');
  const atRestart = acceptedSoFar();
  await pollUntil(() => acceptedSoFar() >= atRestart + defaultRate * 2, {
    timeoutMs: 60_000,
    description: 'traffic',
  });
  await killWhenRunning('payment-relay-2');
  await killWhenRunning('payment-consumer-1');
  // The duplicates scaleOut asserts come from these strikes; a run drew none before this wait.
  await untilStruck(system.faultLog, 'relay-after-publish');
  const atLast = acceptedSoFar();
  await pollUntil(() => acceptedSoFar() >= atLast + defaultRate * 2, {
    timeoutMs: 60_000,
    description: 'traffic',
  });
}
