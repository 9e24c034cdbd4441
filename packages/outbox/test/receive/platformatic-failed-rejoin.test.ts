import { consumerGroupChannel } from '@platformatic/kafka';
import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { startInboxWriter } from '../../src/index.ts';
import { createOutboxMetrics } from '../../src/ops.ts';
import { platformaticClient } from '../../src/platformatic.ts';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  recordingLogger,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('pf_failed_rejoin');

const SESSION_TIMEOUT_MS = 6000;
const STALL_AFTER_MS = 2000;

/**
 * A rejoin that begins and never ends: the client tells of a join only on its diagnostics
 * channel, and a join that then fails (a commit refused with a rejoin error, the coordinator
 * gone meanwhile) leaves no other trace, no error and no heartbeats. The test announces such a
 * join for the member's own client on that channel, then lets no join follow: the member owns
 * nothing from then on, on a real broker, exactly as after a failed rejoin.
 */
it('a @platformatic/kafka member whose rejoin began and never ended shows as stalled, restarts after the rebalance timeout, and stores what was produced meanwhile', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'pf-rejoin', 1);
  const messages = Array.from({ length: 10 }, (_, n) => eventMessage('order-1', 'Step', { n }));
  const metrics = createOutboxMetrics(new Registry(), undefined, { stallAfterMs: STALL_AFTER_MS });
  const logger = recordingLogger();
  // The member's client, as the client itself names it on the channel when it first joins.
  let memberClient: unknown;
  const onGroup = (message: unknown): void => {
    const context = message as { client?: unknown; operation?: unknown };
    if (context.operation === 'joinGroup') memberClient ??= context.client;
  };
  consumerGroupChannel.start.subscribe(onGroup);
  const writer = await startInboxWriter({
    db: testDb.db,
    kafka: platformaticClient({ clientId: 'member', brokers: stack().kafkaBrokers }),
    logger,
    metrics,
    options: {
      groupId: `payments-${topic}`,
      topics: [topic],
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: SESSION_TIMEOUT_MS,
      maxWaitTimeMs: 500,
    },
  });
  const stored = `inbox_event WHERE topic = '${topic}'`;
  const writerHealth = () => metrics.stalls.workers().find((w) => w.worker === 'inbox-writer');
  try {
    await produce(kafka, topic, messages.slice(0, 5));
    await pollUntil(async () => (await count(testDb.db, stored)) === 5, {
      timeoutMs: 30_000,
      description: 'the first five events stored',
    });
    expect(memberClient).toBeDefined();
    consumerGroupChannel.start.publish({ client: memberClient, operation: 'joinGroup' });
    await produce(kafka, topic, messages.slice(5));

    // Waiting for partitions that never come is a stall of the group membership...
    const stalled = await pollUntil(
      () => (writerHealth()?.stalled === true ? writerHealth() : undefined),
      { timeoutMs: 15_000, description: 'the inbox writer shown stalled' },
    );
    expect(stalled).toMatchObject({ reason: expect.stringMatching(/group membership/) });
    // ...while the member owns nothing: nothing produced meanwhile is stored yet.
    expect(await count(testDb.db, stored)).toBe(5);

    // After the rebalance timeout the member restarts, joins and reads on from the group's
    // committed offsets: every event once, in order.
    const storedInOrder = async (): Promise<number[]> =>
      (
        await sql<{ n: number }>`
          SELECT (payload->>'n')::int AS n FROM inbox_event WHERE topic = ${topic}
          ORDER BY seq`.execute(testDb.db)
      ).rows.map((row) => row.n);
    await pollUntil(async () => (await storedInOrder()).length === 10, {
      timeoutMs: 45_000,
      description: 'the five events produced during the failed rejoin stored',
    });
    expect(await storedInOrder()).toEqual(messages.map((_, n) => n));
    expect(
      logger.lines.some((line) =>
        /owned no partition for \d+ ms after a rebalance began/.test(String(line.msg)),
      ),
    ).toBe(true);
    await pollUntil(() => writerHealth()?.stalled === false, {
      timeoutMs: 15_000,
      description: 'the stall cleared once the member owns its partition again',
    });
  } finally {
    consumerGroupChannel.start.unsubscribe(onGroup);
    await writer.stop();
  }
});
