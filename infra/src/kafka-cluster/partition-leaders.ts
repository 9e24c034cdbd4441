import { Kafka, logLevel } from 'kafkajs';

/** One partition of a topic: the node that leads it, its replicas and the in-sync ones. */
export interface PartitionLeader {
  readonly topic: string;
  readonly partition: number;
  /** The stack's name of the leading node (`kafka-2`); null while the partition has none. */
  readonly leader: string | null;
  readonly replicas: readonly string[];
  readonly isr: readonly string[];
}

/**
 * Asks the cluster for the leader of every partition of every topic but Kafka's internal
 * ones. A node id the stack does not know is shown as `node-<id>`.
 */
export async function describePartitionLeaders(options: {
  brokers: readonly string[];
  nodeNames: ReadonlyMap<number, string>;
  timeoutMs: number;
}): Promise<PartitionLeader[]> {
  const nameOf = (id: number): string => options.nodeNames.get(id) ?? `node-${id}`;
  const admin = new Kafka({
    clientId: 'stack-status',
    brokers: [...options.brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(2000, options.timeoutMs),
    requestTimeout: options.timeoutMs,
    // For a few seconds after a node died, the metadata still lists it: a request that picked
    // it is tried again on another node.
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
  }).admin();
  await admin.connect();
  try {
    const names = (await admin.listTopics()).filter((topic) => !topic.startsWith('__'));
    if (names.length === 0) return [];
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    return topics
      .flatMap((topic) =>
        topic.partitions.map((partition) => ({
          topic: topic.name,
          partition: partition.partitionId,
          leader: partition.leader >= 0 ? nameOf(partition.leader) : null,
          replicas: partition.replicas.map(nameOf),
          isr: partition.isr.map(nameOf),
        })),
      )
      .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
