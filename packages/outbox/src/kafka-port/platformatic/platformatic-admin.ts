import { Admin, ConfigResourceTypes } from '@platformatic/kafka';
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
import { LazyClient } from './lazy-client.ts';
import { clientOptions, type PlatformaticConnection } from './platformatic-connection.ts';

/** EARLIEST and LATEST in a ListOffsets request. */
const EARLIEST = -2n;
const LATEST = -1n;

/**
 * The admin on @platformatic/kafka. It connects lazily, so `connect` only builds the client;
 * `close()` is final, so a `connect` after `disconnect` builds a new one.
 */
export function createPlatformaticAdmin(
  connection: PlatformaticConnection,
  options: AdminOptions = {},
): KafkaAdmin {
  return new PlatformaticAdmin(connection, options);
}

class PlatformaticAdmin implements KafkaAdmin {
  readonly #admin: LazyClient<Admin>;

  constructor(connection: PlatformaticConnection, { retries }: AdminOptions) {
    this.#admin = new LazyClient(
      () =>
        new Admin({
          ...clientOptions(connection),
          ...(retries === undefined ? {} : { retries }),
          retryDelay: 200,
        }),
    );
  }

  async connect(): Promise<void> {
    this.#admin.get();
  }

  async disconnect(): Promise<void> {
    await this.#admin.close();
  }

  listTopics(): Promise<string[]> {
    return this.#admin.get().listTopics();
  }

  async createTopics(topics: readonly NewTopic[]): Promise<void> {
    if (topics.length === 0) return;
    // One call per topic: a call applies one set of partitions and settings to all its topics.
    for (const topic of topics) {
      try {
        await this.#admin.get().createTopics({
          topics: [topic.topic],
          partitions: topic.partitions,
          replicas: topic.replicationFactor ?? -1,
          configs: configEntries(topic.configs),
        });
      } catch (error) {
        if (!hasApiId(error, 'TOPIC_ALREADY_EXISTS')) throw error;
      }
    }
    // createTopics returns before the partitions have leaders: wait for them here.
    await waitForLeaders(
      (names) => this.describeTopics(names),
      topics.map((topic) => topic.topic),
    );
  }

  async describeTopics(topics: readonly string[]): Promise<TopicDescription[]> {
    const metadata = await onceApplied(
      () => this.#admin.get().metadata({ topics: [...topics], forceUpdate: true }),
      notAppliedYet,
    );
    return topics.map((topic) => ({
      topic,
      partitions: (metadata.topics.get(topic)?.partitions ?? []).map((one, partition) => ({
        partition,
        leader: one.leader,
        replicas: one.replicas.length,
      })),
    }));
  }

  async topicConfigs(topic: string, names: readonly string[]): Promise<Record<string, string>> {
    const [described] = await onceApplied(
      () =>
        this.#admin.get().describeConfigs({
          includeSynonyms: false,
          resources: [
            {
              resourceType: ConfigResourceTypes.TOPIC,
              resourceName: topic,
              configurationKeys: [...names],
            },
          ],
        }),
      notAppliedYet,
    );
    return Object.fromEntries(
      (described?.configs ?? [])
        .filter((entry) => entry.value !== null)
        .map((entry) => [entry.name, entry.value as string]),
    );
  }

  async replaceTopicConfigs(topic: string, configs: Readonly<Record<string, string>>) {
    // AlterConfigs (not the incremental one) replaces the topic's whole config.
    const resource = { resourceType: ConfigResourceTypes.TOPIC, resourceName: topic };
    const resources = [{ ...resource, configs: configEntries(configs) }];
    await onceApplied(
      () => this.#admin.get().alterConfigs({ validateOnly: false, resources }),
      notAppliedYet,
    );
  }

  async brokerCount(): Promise<number> {
    const metadata = await this.#admin.get().metadata({ topics: [], forceUpdate: true });
    return metadata.brokers.size;
  }

  async partitionEnds(topic: string): Promise<PartitionEnds[]> {
    const [description] = await this.describeTopics([topic]);
    const partitions = (description?.partitions ?? []).map((one) => one.partition);
    const [low, high] = await Promise.all([
      this.#offsetsAt(topic, partitions, EARLIEST),
      this.#offsetsAt(topic, partitions, LATEST),
    ]);
    return partitions.map((partition) => ({
      partition,
      low: (low.get(partition) ?? 0n).toString(),
      high: (high.get(partition) ?? 0n).toString(),
    }));
  }

  async committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]> {
    const descriptions = await this.describeTopics(topics);
    const [group] = await this.#admin.get().listConsumerGroupOffsets({
      groups: [
        {
          groupId,
          topics: descriptions.map((one) => ({
            name: one.topic,
            partitionIndexes: one.partitions.map((p) => p.partition),
          })),
        },
      ],
    });
    const committed = new Map<string, bigint>();
    for (const topic of group?.topics ?? []) {
      for (const partition of topic.partitions) {
        committed.set(`${topic.name}\u0000${partition.partitionIndex}`, partition.committedOffset);
      }
    }
    // As kafkajs reports it: every partition of the topics, '-1' when nothing is committed.
    return descriptions.flatMap((one) =>
      one.partitions.map(({ partition }) => ({
        topic: one.topic,
        partition,
        offset: (committed.get(`${one.topic}\u0000${partition}`) ?? -1n).toString(),
      })),
    );
  }

  /** Each partition's offset at EARLIEST or LATEST. */
  async #offsetsAt(
    topic: string,
    partitions: readonly number[],
    timestamp: bigint,
  ): Promise<Map<number, bigint>> {
    const listed = await this.#admin.get().listOffsets({
      topics: [
        {
          name: topic,
          partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })),
        },
      ],
    });
    return new Map(
      listed.flatMap((one) => one.partitions.map((p) => [p.partitionIndex, p.offset] as const)),
    );
  }
}

/** Whether a Kafka error with this name is somewhere in the error's tree. */
function hasApiId(error: unknown, apiId: string, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 6) return false;
  if ((error as { apiId?: unknown }).apiId === apiId) return true;
  const nested = (error as { errors?: unknown[] }).errors ?? [];
  return (
    nested.some((inner) => hasApiId(inner, apiId, depth + 1)) ||
    hasApiId(error.cause, apiId, depth + 1)
  );
}

/** Errors of a broker that has not applied a topic's creation yet: asking again helps. */
function notAppliedYet(error: unknown): boolean {
  return (
    hasApiId(error, 'UNKNOWN_TOPIC_OR_PARTITION') ||
    hasApiId(error, 'LEADER_NOT_AVAILABLE') ||
    (error instanceof Error && /^Unknown topic /.test(error.message))
  );
}
