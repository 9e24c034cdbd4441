import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { pollUntil } from '@outbox-inbox/infra';
import { AssignerProtocol, type Admin } from 'kafkajs';
import { sql } from 'kysely';
import {
  count,
  createKafka,
  createTopic,
  eventMessage,
  produce,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('failover');

const childScript = fileURLToPath(new URL('../fixtures/inbox-writer-child.ts', import.meta.url));
const PARTITIONS = 4;

/** Partitions of `topic` owned by each member of `groupId`, by client id (empty while rebalancing). */
async function ownership(
  admin: Admin,
  groupId: string,
  topic: string,
): Promise<Map<string, number[]>> {
  const { groups } = await admin.describeGroups([groupId]);
  const owners = new Map<string, number[]>();
  const group = groups[0];
  if (group?.state !== 'Stable') return owners;
  for (const member of group.members) {
    const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
    owners.set(member.clientId, decoded?.assignment[topic] ?? []);
  }
  return owners;
}

it('moves the partitions of a SIGKILLed consumer to the other member well before the old 30 s session timeout; the stream resumes, nothing lost', async () => {
  const kafka = createKafka();
  const topic = await createTopic(kafka, 'failover', PARTITIONS);
  const groupId = `payments-${topic}`;
  const children: ChildProcess[] = [];
  const startMember = (clientId: string): ChildProcess => {
    const child = spawn(process.execPath, [childScript], {
      env: {
        ...process.env,
        DATABASE_URL: testDb.url,
        KAFKA_BROKERS: stack().kafkaBrokers.join(','),
        CLIENT_ID: clientId,
        GROUP_ID: groupId,
        TOPIC: topic,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };
  const admin = kafka.admin();
  await admin.connect();
  // A steady stream to every partition, as the relay would publish it.
  let producing = true;
  let sent = 0;
  const stream = (async () => {
    while (producing) {
      const batch = Array.from({ length: PARTITIONS }, (_, partition) => ({
        ...eventMessage(`order-${sent}-${partition}`, 'OrderCreated', { n: sent }),
        partition,
      }));
      await produce(kafka, topic, batch);
      sent += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    const victim = startMember('member-a');
    startMember('member-b');
    await pollUntil(
      async () => {
        const owners = await ownership(admin, groupId, topic);
        return (
          owners.get('member-a')?.length === PARTITIONS / 2 &&
          owners.get('member-b')?.length === PARTITIONS / 2
        );
      },
      { timeoutMs: 25_000, description: 'both members to own half the partitions' },
    );
    const orphaned = (await ownership(admin, groupId, topic)).get('member-a') ?? [];
    await pollUntil(async () => (await count(testDb.db, 'inbox_event')) >= 4 * PARTITIONS, {
      timeoutMs: 30_000,
      description: 'the stream to be stored by both members',
    });

    const killedAt = Date.now();
    victim.kill('SIGKILL');
    const sentAtKill = sent;
    // The deadline is below the 30 s session timeout the consumers used to have: a failover
    // that waits for that session to expire cannot meet it.
    await pollUntil(
      async () => (await ownership(admin, groupId, topic)).get('member-b')?.length === PARTITIONS,
      {
        timeoutMs: 25_000,
        description: "the survivor to own the killed member's partitions",
      },
    );
    const reassignedMs = Date.now() - killedAt;
    // Resumed: on each orphaned partition, an event produced after the kill is stored.
    await pollUntil(
      async () => {
        const rows = await sql<{ kafka_partition: number; n: number }>`
          SELECT kafka_partition, max((payload->>'n')::int) AS n
          FROM inbox_event GROUP BY kafka_partition`.execute(testDb.db);
        return orphaned.every((p) =>
          rows.rows.some((row) => row.kafka_partition === p && row.n > sentAtKill),
        );
      },
      {
        timeoutMs: 25_000,
        description: 'events produced after the kill to be stored from every orphaned partition',
      },
    );
    const resumedMs = Date.now() - killedAt;
    console.info(
      `failover after SIGKILL: partitions reassigned in ${reassignedMs} ms, stream resumed in ${resumedMs} ms`,
    );
    producing = false;
    await stream;
    // At-least-once across the failover: every event produced is stored, once.
    await pollUntil(async () => (await count(testDb.db, 'inbox_event')) === sent * PARTITIONS, {
      timeoutMs: 20_000,
      description: 'every produced event to be stored',
    });
    expect(await count(testDb.db, 'inbox_event')).toBe(sent * PARTITIONS);
  } finally {
    producing = false;
    await stream;
    await admin.disconnect();
    for (const child of children) child.kill('SIGKILL');
  }
});
