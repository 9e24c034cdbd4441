import { Kafka, logLevel, type Producer } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import {
  createOrderSendingAfterCommit,
  createOrderSendingInsideTransaction,
  naiveSchema,
  naiveTopic,
} from '../src/anti-patterns/naive-order-writer.ts';
import { checkInvariants, waitUntilSettled } from '../src/invariants.ts';
import { startLoad, type LoadResult } from '../src/load-generator.ts';
import { superviseRoles } from '../src/supervisor.ts';
import { paymentLimit, resilientPool, startSystem, type System } from '../src/system.ts';
import { readWholeTopic } from '../src/topic-reader.ts';

/**
 * The forbidden patterns (R-DIST-OBX-X1, X2) next to the outbox, under the same fault at the
 * same moment. The test passes only when the naive variant DOES break and the outbox does not.
 */
describe('7 anti-patterns, shown failing', () => {
  let system: System;
  let naivePool: pg.Pool;
  let producer: Producer;
  /** Both tests run on one system: the invariants look at every order it ever accepted. */
  const everAccepted: LoadResult['accepted'] = new Map();

  function withEveryOrder(result: LoadResult): LoadResult {
    for (const [id, order] of result.accepted) everAccepted.set(id, order);
    return { ...result, accepted: everAccepted };
  }

  const kafka = (): Kafka =>
    new Kafka({
      clientId: 'naive',
      brokers: system.stack.kafkaBrokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 300 },
    });

  async function naiveOrderIds(): Promise<Set<string>> {
    const { rows } = await naivePool.query<{ id: string }>('SELECT id FROM naive_order');
    return new Set(rows.map((row) => row.id));
  }

  async function naiveEventKeys(): Promise<string[]> {
    return (await readWholeTopic(system.stack.kafkaBrokers, naiveTopic)).map(
      (message) => message.key,
    );
  }

  beforeAll(async () => {
    system = await startSystem({ name: `e2e-anti-patterns-${process.pid}` });
    naivePool = resilientPool(await system.stack.createDatabase('naive'));
    await naivePool.query(naiveSchema);
    const admin = kafka().admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: naiveTopic, numPartitions: 1 }],
      waitForLeaders: true,
    });
    await admin.disconnect();
  });

  afterAll(async () => {
    await producer?.disconnect().catch(() => undefined);
    await naivePool?.end();
    await system?.down();
  });

  it('X1, send inside the transaction: a commit that fails after the send leaves a phantom event; the outbox leaves none', async () => {
    const supervisor = superviseRoles(system);
    producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const load = startLoad({
      baseUrl: system.orderUrl,
      ratePerSecond: 30,
      cancelEvery: 0,
      failEvery: 0,
      paymentLimit,
    });
    const naiveOrders: string[] = [];
    const failedNaive: string[] = [];
    await pollUntil(() => load.acceptedSoFar() >= 30, {
      timeoutMs: 60_000,
      description: 'traffic',
    });
    for (let n = 0; n < 20; n++) {
      // Order 10 meets the fault at the worst moment: sent, not yet committed.
      const crash = n === 10 ? () => system.stack.kill('postgres') : undefined;
      try {
        naiveOrders.push(
          await createOrderSendingInsideTransaction({ pool: naivePool, producer }, 100 + n, crash),
        );
      } catch {
        failedNaive.push(`order ${n}`);
      }
      if (n === 10) await system.stack.start('postgres');
    }
    const before = load.acceptedSoFar();
    await pollUntil(() => load.acceptedSoFar() >= before + 30, {
      timeoutMs: 60_000,
      description: 'traffic after',
    });
    const result = withEveryOrder(await load.stop());
    await waitUntilSettled(system, result);
    await supervisor.stop();

    const stored = await naiveOrderIds();
    const phantoms = (await naiveEventKeys()).filter((orderId) => !stored.has(orderId));
    console.log(
      `[7 X1] naive: ${phantoms.length} phantom events; outbox: ${result.accepted.size} orders accepted`,
    );
    expect(failedNaive.length).toBeGreaterThan(0);
    expect(phantoms.length).toBeGreaterThan(0);
    const invariants = await checkInvariants(system, result);
    expect(invariants.violations).toEqual([]);
  });

  it('X2, send after commit: events sent while Kafka is down are lost for good; the outbox delivers them all', async () => {
    const supervisor = superviseRoles(system);
    await producer.disconnect().catch(() => undefined);
    producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const load = startLoad({
      baseUrl: system.orderUrl,
      ratePerSecond: 30,
      cancelEvery: 0,
      failEvery: 0,
      paymentLimit,
    });
    await pollUntil(() => load.acceptedSoFar() >= 30, {
      timeoutMs: 60_000,
      description: 'traffic',
    });

    await system.stack.kill('kafka');
    const acceptedAtKill = load.acceptedSoFar();
    const sendFailures: unknown[] = [];
    const naiveWhileDown: string[] = [];
    for (let n = 0; n < 10; n++) {
      naiveWhileDown.push(
        await createOrderSendingAfterCommit({ pool: naivePool, producer }, 200 + n, (error) =>
          sendFailures.push(error),
        ),
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
    const result = withEveryOrder(await load.stop());
    await waitUntilSettled(system, result);
    await supervisor.stop();

    const delivered = new Set(await naiveEventKeys());
    const lost = naiveWhileDown.filter((orderId) => !delivered.has(orderId));
    console.log(
      `[7 X2] naive: ${lost.length} of ${naiveWhileDown.length} events lost; outbox: none lost`,
    );
    expect(sendFailures.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    const invariants = await checkInvariants(system, result);
    expect(invariants.violations).toEqual([]);
  });
});
