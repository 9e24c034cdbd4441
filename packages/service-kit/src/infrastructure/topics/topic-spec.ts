/** What provisioning needs of a topic declaration (packages/contracts declares them). */
export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
  readonly configs: Readonly<Record<string, string>>;
}

/** The settings a topic gets on a cluster of `brokers` brokers. */
export interface TopicPlan {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
  /** Declared configs plus `min.insync.replicas`. */
  readonly configs: Readonly<Record<string, string>>;
}

export class TopicProvisioningError extends Error {
  readonly code = 'TOPIC_MISMATCH';
  readonly topic: string;

  constructor(topic: string, message: string, options: { cause?: unknown } = {}) {
    super(`topic ${topic}: ${message}`, options);
    this.name = 'TopicProvisioningError';
    this.topic = topic;
  }
}

/**
 * The replication follows the cluster: the declared factor on a cluster that large, one per
 * broker on a smaller one (1 on a laptop's single broker). An explicit factor above the broker
 * count is refused. `min.insync.replicas` stays below the factor, so one broker may be down.
 */
export function planTopic(
  spec: TopicSpec,
  cluster: { readonly brokers: number; readonly replicationFactor?: number | undefined },
): TopicPlan {
  const replicationFactor =
    cluster.replicationFactor ?? Math.min(spec.replicationFactor, cluster.brokers);
  if (replicationFactor > cluster.brokers) {
    throw new TopicProvisioningError(
      spec.name,
      `replication factor ${replicationFactor} is above the cluster's ${cluster.brokers} broker(s)`,
    );
  }
  if (!(spec.partitions >= 1)) {
    throw new TopicProvisioningError(
      spec.name,
      `needs at least 1 partition (declared ${spec.partitions})`,
    );
  }
  const minInsync = Math.max(1, Math.min(spec.minInsyncReplicas, replicationFactor - 1));
  return Object.freeze({
    name: spec.name,
    partitions: spec.partitions,
    replicationFactor,
    configs: Object.freeze({ ...spec.configs, 'min.insync.replicas': String(minInsync) }),
  });
}
