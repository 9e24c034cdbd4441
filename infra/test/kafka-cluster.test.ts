import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// What the services' migrate provisions, from the packages that own it: service-kit's tests
// depend on this package, so this one imports their source files instead of depending back.
import { topicDeclarations } from '../../packages/contracts/src/topics.ts';
import { kafkajsClient } from '../../packages/outbox/src/kafka-port/kafkajs/kafkajs-client.ts';
import { provisionTopics } from '../../packages/service-kit/src/infrastructure/topics/provision-topics.ts';
import { createLogger } from '../../packages/service-kit/src/logger.ts';
import { findRepoRoot, pollUntil, Stack, stacksHome, type PartitionLeader } from '../src/index.ts';

const name = `cluster-${process.pid}`;
const topic = 'cluster.check';
let stack: Stack;

/** `pnpm stack <args> --name=<this stack>` as a shell runs it, without STACK_KAFKA_BROKERS. */
async function stackCli(...args: string[]): Promise<string> {
  const root = findRepoRoot();
  const env: NodeJS.ProcessEnv = { ...process.env, STACK_PROVIDER: 'local' };
  delete env['STACK_KAFKA_BROKERS'];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(root, 'infra', 'src', 'cli.ts'), ...args, `--name=${name}`],
    { cwd: root, env, encoding: 'utf8' },
  );
  return stdout;
}

function clusterKafka(): Kafka {
  return new Kafka({
    clientId: 'cluster-test',
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
}

async function withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = clusterKafka().admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

beforeAll(async () => {
  // From the CLI, so the cluster's shape can only come from `--kafka-brokers 3`.
  expect(await stackCli('up', '--detach', '--kafka-brokers', '3')).toContain('ready in');
  stack = Stack.open(name);
  await withAdmin((admin) =>
    admin.createTopics({
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
    }),
  );
  await pollUntil(
    async () => {
      const leaders = await stack.partitionLeaders();
      return leaders.filter((one) => one.topic === topic && one.leader !== null).length === 3;
    },
    { timeoutMs: 30_000, description: `leaders for ${topic}` },
  );
}, 180_000);

afterAll(async () => {
  // The last test brings it down; this is for a run that failed before it.
  await Stack.openIfExists(name)?.down();
});

function partition(leaders: readonly PartitionLeader[], id: number): PartitionLeader {
  const found = leaders.find((one) => one.topic === topic && one.partition === id);
  if (!found) throw new Error(`partition ${id} of ${topic} is not listed`);
  return found;
}

/** Until every partition of every topic lists `node` (every node when none) as in sync. */
async function untilInSync(node?: string): Promise<void> {
  await pollUntil(
    async () =>
      (await stack.partitionLeaders()).every((one) =>
        node === undefined ? one.isr.length === one.replicas.length : one.isr.includes(node),
      ),
    { timeoutMs: 60_000, description: `${node ?? 'every node'} in sync on every partition` },
  );
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

/** The kernel's state letter of each thread of a process (`T`: stopped by a signal). */
function threadStates(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((task) => {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '';
  });
}

/** Every process from /proc with its parent pid and start time. */
function processTable(): { pid: number; parent: number; startTime: string }[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [{ pid: Number(entry), parent: Number(fields[1]), startTime: fields[19] ?? '' }];
      } catch {
        return []; // Gone since the listing.
      }
    });
}

/** The processes of these pids and all their descendants (PostgreSQL's backends, say). */
function processTrees(roots: readonly number[]): { pid: number; startTime: string }[] {
  const table = processTable();
  const found = table.filter((one) => roots.includes(one.pid));
  for (let index = 0; index < found.length; index++) {
    const parent = found[index]?.pid;
    found.push(...table.filter((one) => one.parent === parent));
  }
  return found;
}

function dataDirOf(node: string): string {
  const record = stack.state.components[node];
  if (record?.kind !== 'kafka') throw new Error(`${node} is not a local Kafka node`);
  return record.dataDir;
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
    expect(status.components.map((c) => c.name).filter((c) => c.startsWith('kafka'))).toEqual([
      'kafka-1',
      'kafka-2',
      'kafka-3',
    ]);
    const listed = (status.partitions ?? []).filter((one) => one.topic === topic);
    expect(listed.map((one) => one.partition)).toEqual([0, 1, 2]);
    for (const one of listed) {
      expect([...one.replicas].sort()).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
      expect(one.leader).toMatch(/^kafka-[123]$/);
    }
  });

  it('holds the contracts’ topics as migrate provisions them: 3 replicas, 2 in sync, the declared configs', async () => {
    const logger = createLogger({ service: 'cluster-test', level: 'silent' });
    await withAdmin(async (admin) => {
      const names = topicDeclarations.map((declared) => declared.name);
      const portAdmin = kafkajsClient(clusterKafka()).createAdmin();
      await portAdmin.connect();
      const provisioned = await provisionTopics(portAdmin, topicDeclarations, { logger }).finally(
        () => portAdmin.disconnect(),
      );
      expect(provisioned.created).toEqual(names);
      // The controller answered the creation; a broker may learn of the topics a moment later,
      // and until then answers "does not host this topic-partition".
      const { topics, described } = await pollUntil(
        async () => ({
          topics: (await admin.fetchTopicMetadata({ topics: names })).topics,
          described: await admin.describeConfigs({
            includeSynonyms: false,
            resources: names.map((one) => ({ type: ConfigResourceTypes.TOPIC, name: one })),
          }),
        }),
        { timeoutMs: 30_000, intervalMs: 250, description: 'every broker to know the new topics' },
      );
      for (const declared of topicDeclarations) {
        const partitions = topics.find((one) => one.name === declared.name)?.partitions ?? [];
        expect(partitions).toHaveLength(declared.partitions);
        for (const one of partitions) expect(one.replicas).toHaveLength(3);
        const configs = Object.fromEntries(
          (
            described.resources.find((one) => one.resourceName === declared.name)?.configEntries ??
            []
          ).map((entry) => [entry.configName, entry.configValue]),
        );
        // The declared retention, timestamp type and cleanup; the in-sync minimum on top.
        expect(Object.keys(declared.configs)).toEqual(
          expect.arrayContaining(['retention.ms', 'message.timestamp.type']),
        );
        expect(configs).toMatchObject({ ...declared.configs, 'min.insync.replicas': '2' });
      }
    });
  });

  it('creates no topic on a send to an unknown one, even from a producer that allows it', async () => {
    const unknown = `no.such.topic-${process.pid}`;
    const producer = new Kafka({
      clientId: 'cluster-test-producer',
      brokers: stack.kafkaBrokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 },
    }).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      // The producer itself works: the refusal below is about the topic.
      await producer.send({ topic, messages: [{ value: 'known' }] });
      await expect(producer.send({ topic: unknown, messages: [{ value: 'x' }] })).rejects.toThrow(
        /does not host this topic-partition/,
      );
    } finally {
      await producer.disconnect();
    }
    // A broker that auto-creates answers the same error at first and creates the topic a moment
    // later, so absence is read behind a barrier: a topic created after the send. The cluster's
    // metadata is one ordered log: a node that lists the barrier lists what was created before.
    const barrier = `cluster.barrier-${process.pid}`;
    const listed = await withAdmin(async (admin) => {
      await admin.createTopics({
        topics: [{ topic: barrier, numPartitions: 1, replicationFactor: 3 }],
        waitForLeaders: false,
      });
      return pollUntil(
        async () => {
          const names = await admin.listTopics();
          return names.includes(barrier) && names;
        },
        { timeoutMs: 30_000, description: `${barrier} to be listed` },
      );
    });
    expect(listed).not.toContain(unknown);
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
    await untilInSync();
  });

  it('wipes the quorum’s leader: it comes back with empty storage and copies its replicas back', async () => {
    // The leader is the hard case: the other voters still follow it for a moment after it died.
    const node = await pollUntil(() => stack.quorumLeader(), {
      timeoutMs: 30_000,
      description: 'a leader of the controller quorum',
    });
    const dataDir = dataDirOf(node);
    const marker = path.join(dataDir, 'left-before-the-wipe');
    writeFileSync(marker, '');
    const formattedAs = (): string | undefined =>
      /directory\.id=(\S+)/.exec(readFileSync(path.join(dataDir, 'meta.properties'), 'utf8'))?.[1];
    const before = formattedAs();
    expect(before).toBeDefined();
    const producer = new Kafka({
      clientId: 'cluster-test-producer',
      brokers: stack.kafkaBrokers,
      logLevel: logLevel.NOTHING,
    }).producer();
    await producer.connect();
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [0, 1, 2].map((id) => ({ partition: id, value: `before the wipe ${id}` })),
      });
    } finally {
      await producer.disconnect();
    }

    await stack.wipe(node);
    expect(existsSync(marker)).toBe(false);
    // Formatted again: a new storage directory, not the old one left in place.
    expect(formattedAs()).not.toBe(before);
    await untilInSync(node);
    // In sync means caught up: the records written before the wipe are on its disk again.
    for (const id of [0, 1, 2]) {
      const log = path.join(dataDir, `${topic}-${id}`, '00000000000000000000.log');
      expect(readFileSync(log, 'latin1')).toContain(`before the wipe ${id}`);
    }
  });

  it('pauses a node’s JVM (every thread stopped, its port silent) and resumes it', async () => {
    const node = 'kafka-2';
    const pid = stack.pid(node);
    if (pid === undefined) throw new Error(`${node} is not running`);
    // The node's own JVM, not a stand-in: its command line runs the broker.
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toContain('kafka.Kafka');
    const others = stack.kafkaNodes.filter((one) => one !== node);
    const askOnly = () => stack.partitionLeaders({ without: others, timeoutMs: 1000 });
    // It answers first: the partitions, once it has applied the topics' creation.
    const answers = (description: string) =>
      pollUntil(async () => (await askOnly()).length > 0, { timeoutMs: 30_000, description });
    await answers(`${node} to answer before the pause`);

    stack.pause(node);
    try {
      await pollUntil(() => threadStates(pid).every((state) => state === 'T'), {
        timeoutMs: 5000,
        intervalMs: 20,
        description: `every thread of ${node} stopped`,
      });
      expect(stack.status().find((one) => one.name === node)).toMatchObject({ paused: true });
      // Its port still accepts connections (the kernel does that, not refused), and nothing
      // answers: kafkajs times out, or drops the connection it gave up on.
      await expect(askOnly()).rejects.toThrow(/timed? ?out|timeout|not connected/i);
    } finally {
      stack.resume(node);
    }
    await pollUntil(() => threadStates(pid).every((state) => state !== 'T'), {
      timeoutMs: 5000,
      intervalMs: 20,
      description: `every thread of ${node} running again`,
    });
    expect(stack.pid(node)).toBe(pid);
    await answers(`${node} to answer after the resume`);
    await untilInSync(node);
  });

  it('leaves no process behind after `down`: every node’s pid is gone, and their children', async () => {
    const pids = stack.status().flatMap((one) => (one.pid === undefined ? [] : [one.pid]));
    expect(pids).toHaveLength(4); // three nodes and PostgreSQL
    const before = processTrees(pids);

    expect(await stackCli('down')).toContain(`stack "${name}" is down`);
    // A pid the kernel has given to a new process since is not ours: the start time tells.
    const alive = new Set(processTable().map((one) => `${one.pid}@${one.startTime}`));
    const left = before.filter((one) => alive.has(`${one.pid}@${one.startTime}`));
    expect(left.map((one) => one.pid)).toEqual([]);
    expect(Stack.openIfExists(name)).toBeUndefined();
  });
});
