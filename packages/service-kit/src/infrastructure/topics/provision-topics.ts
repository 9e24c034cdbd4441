import kafkajs, { type Admin } from 'kafkajs';
import type { Logger } from 'pino';
import { planTopic, TopicProvisioningError, type TopicPlan, type TopicSpec } from './topic-spec.ts';

// kafkajs is CommonJS and Node's ESM loader does not see this export as a named one.
const { ConfigResourceTypes } = kafkajs;

export interface ProvisionResult {
  readonly created: readonly string[];
  /** Topics whose configs had drifted and were set back to the declared values. */
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
}

async function existingTopics(admin: Admin, names: readonly string[]): Promise<Set<string>> {
  const listed = new Set(await admin.listTopics());
  return new Set(names.filter((name) => listed.has(name)));
}

/** Partitions and replication cannot be changed safely by us: a mismatch is an error. */
async function checkLayout(admin: Admin, plan: TopicPlan): Promise<void> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [plan.name] });
  const partitions = topics[0]?.partitions ?? [];
  if (partitions.length !== plan.partitions) {
    throw new TopicProvisioningError(
      plan.name,
      `has ${partitions.length} partitions, the contract declares ${plan.partitions}; ` +
        'changing the count moves keys to other partitions and breaks per-key order: ' +
        'recreate the topic (and replay the outbox) or change the declaration',
    );
  }
  const replicas = Math.min(...partitions.map((partition) => partition.replicas.length));
  if (replicas !== plan.replicationFactor) {
    throw new TopicProvisioningError(
      plan.name,
      `has replication factor ${replicas}, expected ${plan.replicationFactor} on this cluster`,
    );
  }
}

/** Sets the declared configs back when any differs; returns whether it had to. */
async function restoreConfigs(admin: Admin, plan: TopicPlan): Promise<boolean> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: plan.name,
        configNames: Object.keys(plan.configs),
      },
    ],
  });
  const actual = new Map(
    (described.resources[0]?.configEntries ?? []).map((entry) => [
      entry.configName,
      entry.configValue,
    ]),
  );
  const drifted = Object.entries(plan.configs).some(([name, value]) => actual.get(name) !== value);
  if (!drifted) return false;
  // alterConfigs replaces the topic's whole config: the declaration is the truth.
  await admin.alterConfigs({
    validateOnly: false,
    resources: [
      {
        type: ConfigResourceTypes.TOPIC,
        name: plan.name,
        configEntries: Object.entries(plan.configs).map(([name, value]) => ({ name, value })),
      },
    ],
  });
  return true;
}

const settleMs = 30_000;

/** Errors of a broker that has not applied a topic's creation yet: asking again helps. */
function notAppliedYet(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const type = 'type' in current ? current.type : undefined;
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE') return true;
    current = current.cause;
  }
  return false;
}

/**
 * Runs a step about topics that may have just been created. On a cluster each broker applies a
 * creation on its own, and kafkajs may ask one that has not yet: retried until a deadline.
 */
async function onceApplied<T>(step: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!notAppliedYet(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Every partition of the new topics has a leader, as the cluster tells. */
async function waitForLeaders(admin: Admin, plans: readonly TopicPlan[]): Promise<void> {
  const deadline = Date.now() + settleMs;
  const names = plans.map((plan) => plan.name);
  while (Date.now() < deadline) {
    const { topics } = await onceApplied(() => admin.fetchTopicMetadata({ topics: names }));
    const led = topics.every(
      (topic) =>
        topic.partitions.length > 0 && topic.partitions.every((partition) => partition.leader >= 0),
    );
    if (led) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the new topics ${names.join(', ')} have no leaders after ${settleMs / 1000} s`);
}

/**
 * Makes the cluster hold the declared topics: creates the missing ones, restores drifted
 * configs, and refuses (TopicProvisioningError) a topic whose partitions or replication
 * differ from the declaration. Safe to run on every migrate, from several processes.
 */
export async function provisionTopics(
  admin: Admin,
  specs: readonly TopicSpec[],
  options: { readonly logger: Logger; readonly replicationFactor?: number | undefined },
): Promise<ProvisionResult> {
  const { brokers } = await admin.describeCluster();
  const plans = specs.map((spec) =>
    planTopic(spec, { brokers: brokers.length, replicationFactor: options.replicationFactor }),
  );
  const existing = await existingTopics(
    admin,
    plans.map((plan) => plan.name),
  );
  const missing = plans.filter((plan) => !existing.has(plan.name));
  if (missing.length > 0) {
    // false when another process created them first: the checks below still apply.
    await admin.createTopics({
      // kafkajs's own wait fails at once when it asks a broker of a cluster that has not
      // heard of the new topic yet (UNKNOWN_TOPIC_OR_PARTITION): wait here instead.
      waitForLeaders: false,
      topics: missing.map((plan) => ({
        topic: plan.name,
        numPartitions: plan.partitions,
        replicationFactor: plan.replicationFactor,
        configEntries: Object.entries(plan.configs).map(([name, value]) => ({ name, value })),
      })),
    });
    await waitForLeaders(admin, missing);
  }
  const updated: string[] = [];
  const unchanged: string[] = [];
  for (const plan of plans) {
    await onceApplied(() => checkLayout(admin, plan));
    const restored = await onceApplied(() => restoreConfigs(admin, plan));
    if (restored) updated.push(plan.name);
    else if (existing.has(plan.name)) unchanged.push(plan.name);
  }
  const result = { created: missing.map((plan) => plan.name), updated, unchanged };
  options.logger.info(result, 'Kafka topics provisioned');
  return result;
}
