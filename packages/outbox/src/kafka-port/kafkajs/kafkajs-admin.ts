import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import type {
  AdminOptions,
  CommittedOffset,
  KafkaAdmin,
  NewTopic,
  PartitionEnds,
  TopicDescription,
} from '../kafka-client.ts';
import { configEntries } from '../shared/config-entries.ts';
import { onceApplied, waitForLeaders } from '../shared/settle-topics.ts';
import type { CountRequests } from './request-counting.ts';

// kafkajs is CommonJS and Node's ESM loader does not see this export as a named one.
const { ConfigResourceTypes } = kafkajs;

export function createKafkajsAdmin(
  kafka: Kafka,
  options: AdminOptions = {},
  countRequests: CountRequests = () => undefined,
): KafkaAdmin {
  const admin = kafka.admin(
    options.retries === undefined ? {} : { retry: { retries: options.retries } },
  );
  countRequests(admin);
  return new KafkajsAdmin(admin);
}

/** The port's admin on a kafkajs admin client. */
class KafkajsAdmin implements KafkaAdmin {
  readonly #admin: Admin;

  constructor(admin: Admin) {
    this.#admin = admin;
  }

  connect(): Promise<void> {
    return this.#admin.connect();
  }

  disconnect(): Promise<void> {
    return this.#admin.disconnect();
  }

  listTopics(): Promise<string[]> {
    return this.#admin.listTopics();
  }

  async createTopics(topics: readonly NewTopic[]): Promise<void> {
    if (topics.length === 0) return;
    // kafkajs's own wait fails at once when it asks a broker of a cluster that has not heard of
    // the new topic yet (UNKNOWN_TOPIC_OR_PARTITION): wait here instead.
    await this.#admin.createTopics({
      waitForLeaders: false,
      topics: topics.map((topic) => ({
        topic: topic.topic,
        numPartitions: topic.partitions,
        ...(topic.replicationFactor === undefined
          ? {}
          : { replicationFactor: topic.replicationFactor }),
        configEntries: configEntries(topic.configs),
      })),
    });
    await waitForLeaders(
      (names) => this.describeTopics(names),
      topics.map((topic) => topic.topic),
    );
  }

  async describeTopics(topics: readonly string[]): Promise<TopicDescription[]> {
    const metadata = await onceApplied(
      () => this.#admin.fetchTopicMetadata({ topics: [...topics] }),
      notAppliedYet,
    );
    return metadata.topics.map((topic) => ({
      topic: topic.name,
      partitions: topic.partitions.map((one) => ({
        partition: one.partitionId,
        leader: one.leader,
        replicas: one.replicas.length,
      })),
    }));
  }

  async topicConfigs(topic: string, names: readonly string[]): Promise<Record<string, string>> {
    const described = await onceApplied(
      () =>
        this.#admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [...names] }],
        }),
      notAppliedYet,
    );
    return Object.fromEntries(
      (described.resources[0]?.configEntries ?? []).map((entry) => [
        entry.configName,
        entry.configValue,
      ]),
    );
  }

  async replaceTopicConfigs(topic: string, configs: Readonly<Record<string, string>>) {
    // kafkajs has no incremental alter: AlterConfigs replaces the topic's whole config.
    const resource = { type: ConfigResourceTypes.TOPIC, name: topic };
    const resources = [{ ...resource, configEntries: configEntries(configs) }];
    await onceApplied(
      () => this.#admin.alterConfigs({ validateOnly: false, resources }),
      notAppliedYet,
    );
  }

  async brokerCount(): Promise<number> {
    const { brokers } = await this.#admin.describeCluster();
    return brokers.length;
  }

  async partitionEnds(topic: string): Promise<PartitionEnds[]> {
    const offsets = await this.#admin.fetchTopicOffsets(topic);
    return offsets.map(({ partition, low, high }) => ({ partition, low, high }));
  }

  async committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]> {
    const committed = await this.#admin.fetchOffsets({ groupId, topics: [...topics] });
    return committed.flatMap(({ topic, partitions }) =>
      partitions.map(({ partition, offset }) => ({ topic, partition, offset })),
    );
  }
}

/** Errors of a broker that has not applied a topic's creation yet: asking again helps. */
function notAppliedYet(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const type = 'type' in current ? current.type : undefined;
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE') return true;
    current = current.cause;
  }
  return false;
}
