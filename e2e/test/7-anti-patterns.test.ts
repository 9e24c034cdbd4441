import { Kafka, logLevel, type Producer } from 'kafkajs';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import {
  createOrderSendingAfterCommit,
  createOrderSendingInsideTransaction,
  naiveSchema,
  naiveTopic,
} from '../src/anti-patterns/naive-order-writer.ts';
import { checkInvariants } from '../src/invariants/check-invariants.ts';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { waitUntilSettled } from '../src/invariants/settle.ts';
import { startLoad } from '../src/load-generator.ts';
import { superviseRoles } from '../src/supervisor.ts';
import { paymentLimit, resilientPool, startSystem, type System } from '../src/system.ts';
import { readWholeTopic } from '../src/topic-reader.ts';

/** A system of its own for one case, with the naive writer's table, topic and producer. */
interface Rig {
  readonly system: System;
  readonly naivePool: pg.Pool;
  readonly producer: Producer;
  naiveOrderIds(): Promise<Set<string>>;
  naiveEventKeys(): Promise<string[]>;
  down(): Promise<void>;
}

async function startRig(name: string): Promise<Rig> {
  const system = await startSystem({
    name: `e2e-anti-${name}-${process.pid}`,
    ownServers: 'it kills Kafka and PostgreSQL',
  });
  const naivePool = resilientPool(await system.stack.createDatabase('naive'));
  await naivePool.query(naiveSchema);
  const kafka = new Kafka({
    clientId: 'naive',
    brokers: system.stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 300 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: naiveTopic, numPartitions: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return {
    system,
    naivePool,
    producer,
    async naiveOrderIds() {
      const { rows } = await naivePool.query<{ id: string }>('SELECT id FROM naive_order');
      return new Set(rows.map((row) => row.id));
    },
    async naiveEventKeys() {
      return (await readWholeTopic(system.stack.kafkaBrokers, naiveTopic)).map((m) => m.key);
    },
    async down() {
      await producer.disconnect().catch(() => undefined);
      await naivePool.end();
      await system.down();
    },
  };
}

function outboxLoad(system: System) {
  return startLoad({
    baseUrl: system.orderUrl,
    ratePerSecond: 30,
    cancelEvery: 0,
    failEvery: 0,
    paymentLimit,
  });
}

/**
 * The forbidden patterns (R-DIST-OBX-X1, X2) next to the outbox, under the same fault at the
 * same moment, each case on a system of its own. The test passes only when the naive variant
 * breaks exactly as predicted and the outbox does not.
 */
describe('7 anti-patterns, shown failing', () => {
  it('X1, send inside the transaction: a commit that fails after the send leaves a phantom event; the outbox leaves none', async () => {
    const rig = await startRig('x1');
    const { system } = rig;
    const naive = { pool: rig.naivePool, producer: rig.producer };
    const supervisor = superviseRoles(system);
    try {
      const load = outboxLoad(system);
      await pollUntil(() => load.acceptedSoFar() >= 30, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      const failedNaive: number[] = [];
      let crashed = false;
      for (let n = 0; n < 20; n++) {
        // Order 10 meets the fault at the worst moment: sent, not yet committed.
        const crash =
          n === 10
            ? async () => {
                crashed = await system.stack.kill('postgres');
              }
            : undefined;
        await createOrderSendingInsideTransaction(naive, 100 + n, crash).catch(() =>
          failedNaive.push(n),
        );
        if (n === 10) await system.stack.start('postgres');
      }
      const before = load.acceptedSoFar();
      await pollUntil(() => load.acceptedSoFar() >= before + 30, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
      const result = await load.stop();
      await waitUntilSettled(system, result);

      const stored = await rig.naiveOrderIds();
      const phantoms = (await rig.naiveEventKeys()).filter((orderId) => !stored.has(orderId));
      console.log(
        `[7 X1] naive: ${phantoms.length} phantom event(s); outbox: ${result.accepted.size} orders accepted, none phantom`,
      );
      expect(crashed).toBe(true);
      // Exactly the order whose commit met the crash failed, and its event went out anyway.
      expect(failedNaive).toEqual([10]);
      expect(stored.size).toBe(19);
      expect(phantoms).toHaveLength(1);
      expectInvariantsHeld(await checkInvariants(system, result));
    } finally {
      await supervisor.stop();
      await rig.down();
    }
  });

  it('X2, send after commit: events sent while Kafka is down are lost for good; the outbox delivers them all', async () => {
    const rig = await startRig('x2');
    const { system } = rig;
    const naive = { pool: rig.naivePool, producer: rig.producer };
    const supervisor = superviseRoles(system);
    try {
      const load = outboxLoad(system);
      await pollUntil(() => load.acceptedSoFar() >= 30, {
        timeoutMs: 60_000,
        description: 'traffic',
      });
      expect(await system.stack.kill('kafka')).toBe(true);
      const acceptedAtKill = load.acceptedSoFar();
      const sendFailures: unknown[] = [];
      const naiveWhileDown: string[] = [];
      for (let n = 0; n < 10; n++) {
        naiveWhileDown.push(
          await createOrderSendingAfterCommit(naive, 200 + n, (error) => sendFailures.push(error)),
        );
      }
      await pollUntil(() => load.acceptedSoFar() >= acceptedAtKill + 60, {
        timeoutMs: 60_000,
        description: 'orders while Kafka is down',
      });
      await system.stack.start('kafka');
      const before = load.acceptedSoFar();
      await pollUntil(() => load.acceptedSoFar() >= before + 30, {
        timeoutMs: 60_000,
        description: 'traffic after',
      });
      const result = await load.stop();
      await waitUntilSettled(system, result);

      const delivered = new Set(await rig.naiveEventKeys());
      const lost = naiveWhileDown.filter((orderId) => !delivered.has(orderId));
      console.log(
        `[7 X2] naive: ${lost.length} of ${naiveWhileDown.length} events lost; outbox: none lost`,
      );
      // Every one of the ten orders committed while Kafka was down lost its event for good.
      expect(sendFailures).toHaveLength(10);
      expect((await rig.naiveOrderIds()).size).toBe(10);
      expect(lost).toHaveLength(10);
      expectInvariantsHeld(await checkInvariants(system, result));
    } finally {
      await supervisor.stop();
      await rig.down();
    }
  });
});
