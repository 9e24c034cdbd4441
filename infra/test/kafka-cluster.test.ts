import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRepoRoot, pollUntil, Stack, stacksHome, type PartitionLeader } from '../src/index.ts';

const name = `cluster-${process.pid}`;
const topic = 'cluster.check';
let stack: Stack;

beforeAll(async () => {
  // Only the nodes: PostgreSQL has nothing to do with the cluster's shape.
  stack = await Stack.up({
    name,
    servers: ['kafka'],
    env: { ...process.env, STACK_PROVIDER: 'local', STACK_KAFKA_BROKERS: '3' },
  });
  const admin = new Kafka({
    clientId: 'cluster-test',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: 3,
          replicationFactor: 3,
          configEntries: [{ name: 'min.insync.replicas', value: '2' }],
        },
      ],
      // kafkajs's own wait gives up when it asks a node that has not heard of the topic yet.
      waitForLeaders: false,
    });
  } finally {
    await admin.disconnect();
  }
  await pollUntil(
    async () => {
      const leaders = await stack.partitionLeaders();
      return leaders.filter((one) => one.topic === topic && one.leader !== null).length === 3;
    },
    { timeoutMs: 30_000, description: `leaders for ${topic}` },
  );
}, 180_000);

afterAll(async () => {
  await stack?.down();
});

function partition(leaders: readonly PartitionLeader[], id: number): PartitionLeader {
  const found = leaders.find((one) => one.topic === topic && one.partition === id);
  if (!found) throw new Error(`partition ${id} of ${topic} is not listed`);
  return found;
}

/** What a person sees with `pnpm stack status --json`. */
function statusJson(): {
  components: { name: string; running: boolean }[];
  partitions?: PartitionLeader[];
} {
  const root = findRepoRoot();
  const stdout = execFileSync(
    'bash',
    [path.join(root, 'pnpm'), 'stack', 'status', '--json', `--name=${name}`],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  return JSON.parse(stdout) as ReturnType<typeof statusJson>;
}

describe('a three-node Kafka cluster on the local provider', () => {
  it('runs three nodes, each with its own ports and data folder, all voters of one quorum', () => {
    expect(stack.kafkaNodes).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
    expect(new Set(stack.kafkaBrokers).size).toBe(3);
    const records = stack.kafkaNodes.map((node) => stack.state.components[node]);
    const dataDirs = records.map((record) => (record?.kind === 'kafka' ? record.dataDir : ''));
    expect(new Set(dataDirs).size).toBe(3);
    for (const dir of dataDirs) expect(dir.startsWith(path.join(stacksHome(), name))).toBe(true);
    const ports = records.flatMap((record) => Object.values(record?.ports ?? {}));
    expect(new Set(ports).size).toBe(6);
  });

  it('lists every node and the leader and in-sync nodes of each partition in status --json', () => {
    const status = statusJson();
    expect(status.components.map((c) => c.name)).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
    const listed = (status.partitions ?? []).filter((one) => one.topic === topic);
    expect(listed.map((one) => one.partition)).toEqual([0, 1, 2]);
    for (const one of listed) {
      expect([...one.replicas].sort()).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
      expect(one.leader).toMatch(/^kafka-[123]$/);
    }
  });

  it('moves leadership off a SIGKILLed leader, and takes it back in sync after a start', async () => {
    const leader = partition(await stack.partitionLeaders(), 0).leader;
    if (leader === null) throw new Error('partition 0 has no leader');
    await stack.kill(leader);
    expect(stack.isRunning(leader)).toBe(false);
    const moved = await pollUntil(
      async () => {
        const now = partition(await stack.partitionLeaders(), 0);
        return now.leader !== null && now.leader !== leader && !now.isr.includes(leader) && now;
      },
      { timeoutMs: 30_000, description: `a new leader for partition 0 after ${leader} died` },
    );
    expect(moved.isr).toHaveLength(2);
    await stack.start(leader);
    await pollUntil(async () => partition(await stack.partitionLeaders(), 0).isr.includes(leader), {
      timeoutMs: 60_000,
      description: `${leader} back in sync`,
    });
  });

  it('stops nodes one by one, down to an in-sync set below the minimum, and restarts them', async () => {
    const [first, second, last] = stack.kafkaNodes;
    if (!first || !second || !last) throw new Error('three nodes expected');
    await stack.stop(first);
    await stack.stop(second);
    const leaders = await stack.partitionLeaders();
    for (const id of [0, 1, 2]) {
      expect(partition(leaders, id)).toMatchObject({ leader: last, isr: [last] });
    }
    await Promise.all([stack.start(first), stack.start(second)]);
    await pollUntil(
      async () =>
        (await stack.partitionLeaders())
          .filter((one) => one.topic === topic)
          .every((one) => one.isr.length === 3),
      { timeoutMs: 60_000, description: 'every node back in sync' },
    );
  });
});
