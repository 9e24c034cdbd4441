import type { KafkaAdmin } from '@outbox-inbox/outbox/kafka-port';
import type { Logger } from 'pino';
import { planTopic, TopicProvisioningError, type TopicPlan, type TopicSpec } from './topic-spec.ts';

export interface ProvisionResult {
  readonly created: readonly string[];
  /** Topics whose configs had drifted and were set back to the declared values. */
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
}

async function existingTopics(admin: KafkaAdmin, names: readonly string[]): Promise<Set<string>> {
  const listed = new Set(await admin.listTopics());
  return new Set(names.filter((name) => listed.has(name)));
}

/** Partitions and replication cannot be changed safely by us: a mismatch is an error. */
async function checkLayout(admin: KafkaAdmin, plan: TopicPlan): Promise<void> {
  const topics = await admin.describeTopics([plan.name]);
  const partitions = topics[0]?.partitions ?? [];
  if (partitions.length !== plan.partitions) {
    throw new TopicProvisioningError(
      plan.name,
      `has ${partitions.length} partitions, the contract declares ${plan.partitions}; ` +
        'changing the count moves keys to other partitions and breaks per-key order: ' +
        'recreate the topic (and replay the outbox) or change the declaration',
    );
  }
  const replicas = Math.min(...partitions.map((partition) => partition.replicas));
  if (replicas !== plan.replicationFactor) {
    throw new TopicProvisioningError(
      plan.name,
      `has replication factor ${replicas}, expected ${plan.replicationFactor} on this cluster`,
    );
  }
}

/** Sets the declared configs back when any differs; returns whether it had to. */
async function restoreConfigs(admin: KafkaAdmin, plan: TopicPlan): Promise<boolean> {
  const actual = await admin.topicConfigs(plan.name, Object.keys(plan.configs));
  const drifted = Object.entries(plan.configs).some(([name, value]) => actual[name] !== value);
  if (!drifted) return false;
  await admin.replaceTopicConfigs(plan.name, plan.configs);
  return true;
}

/**
 * Makes the cluster hold the declared topics: creates the missing ones, restores drifted
 * configs, and refuses (TopicProvisioningError) a topic whose partitions or replication
 * differ from the declaration. Safe to run on every migrate, from several processes.
 */
export async function provisionTopics(
  admin: KafkaAdmin,
  specs: readonly TopicSpec[],
  options: { readonly logger: Logger; readonly replicationFactor?: number | undefined },
): Promise<ProvisionResult> {
  const brokers = await admin.brokerCount();
  const plans = specs.map((spec) =>
    planTopic(spec, { brokers, replicationFactor: options.replicationFactor }),
  );
  const existing = await existingTopics(
    admin,
    plans.map((plan) => plan.name),
  );
  const missing = plans.filter((plan) => !existing.has(plan.name));
  if (missing.length > 0) {
    // Another process may create them first: the checks below still apply.
    await admin.createTopics(
      missing.map((plan) => ({
        topic: plan.name,
        partitions: plan.partitions,
        replicationFactor: plan.replicationFactor,
        configs: plan.configs,
      })),
    );
  }
  const updated: string[] = [];
  const unchanged: string[] = [];
  for (const plan of plans) {
    await checkLayout(admin, plan);
    const restored = await restoreConfigs(admin, plan);
    if (restored) updated.push(plan.name);
    else if (existing.has(plan.name)) unchanged.push(plan.name);
  }
  const result = { created: missing.map((plan) => plan.name), updated, unchanged };
  options.logger.info(result, 'Kafka topics provisioned');
  return result;
}
