import { topicDeclarations } from '@outbox-inbox/contracts';
import { pollUntil, type Stack } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';

const contractTopics: ReadonlySet<string> = new Set(topicDeclarations.map((topic) => topic.name));

/**
 * The node leading the partition of `topic` that holds the most messages: the one whose
 * death interrupts the most batches in flight.
 */
export async function leaderOfBusiestPartition(stack: Stack, topic: string): Promise<string> {
  const running = stack.kafkaNodes.filter((node) => stack.isRunning(node));
  const admin = new Kafka({
    clientId: 'e2e-cluster-faults',
    brokers: stack.kafkaBrokers.filter((_, index) =>
      running.includes(stack.kafkaNodes[index] ?? ''),
    ),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
  }).admin();
  await admin.connect();
  let busiest: number;
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const sorted = [...offsets].sort((a, b) => Number(b.high) - Number(a.high));
    busiest = sorted[0]?.partition ?? 0;
  } finally {
    await admin.disconnect();
  }
  const leader = (await stack.partitionLeaders()).find(
    (one) => one.topic === topic && one.partition === busiest,
  )?.leader;
  if (!leader) throw new Error(`partition ${busiest} of ${topic} has no leader`);
  return leader;
}

/**
 * Waits until every replica of the contracts' topics is in sync again: how an operator knows
 * a node has rejoined before touching the next one.
 */
export async function waitUntilInSync(stack: Stack, timeoutMs = 90_000): Promise<void> {
  await pollUntil(
    async () => {
      const partitions = (await stack.partitionLeaders()).filter((one) =>
        contractTopics.has(one.topic),
      );
      return (
        partitions.length > 0 &&
        partitions.every((one) => one.leader !== null && one.isr.length === one.replicas.length)
      );
    },
    { timeoutMs, intervalMs: 500, description: 'every replica back in sync' },
  );
}

/** The contracts' partitions `node` leads now, asked of the other nodes. */
export async function partitionsLedBy(stack: Stack, node: string): Promise<number> {
  const partitions = await stack.partitionLeaders({ without: [node] });
  return partitions.filter((one) => contractTopics.has(one.topic) && one.leader === node).length;
}
