import { Admin, ConfigResourceTypes } from '@platformatic/kafka';
import type { AdminOptions, KafkaAdmin, TopicDescription } from '../kafka-client.ts';
import { onceApplied, waitForLeaders } from '../settle-topics.ts';
import type { PlatformaticConnection } from './platformatic-connection.ts';

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
  let admin: Admin | undefined;
  const open = (): Admin =>
    (admin ??= new Admin({
      clientId: connection.clientId,
      bootstrapBrokers: [...connection.brokers],
      ...(options.retries === undefined ? {} : { retries: options.retries }),
      retryDelay: 200,
      ...(connection.timeoutMs === undefined ? {} : { timeout: connection.timeoutMs }),
    }));
  const describeTopics = async (topics: readonly string[]): Promise<TopicDescription[]> => {
    const metadata = await onceApplied(
      () => open().metadata({ topics: [...topics], forceUpdate: true }),
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
  };
  return {
    async connect() {
      open();
    },
    async disconnect() {
      const closing = admin;
      admin = undefined;
      await closing?.close().catch(() => undefined);
    },
    listTopics: () => open().listTopics(),
    async createTopics(topics) {
      if (topics.length === 0) return;
      // One call per topic: a call applies one set of partitions and settings to all its topics.
      for (const topic of topics) {
        try {
          await open().createTopics({
            topics: [topic.topic],
            partitions: topic.partitions,
            replicas: topic.replicationFactor ?? -1,
            configs: Object.entries(topic.configs ?? {}).map(([name, value]) => ({ name, value })),
          });
        } catch (error) {
          if (!hasApiId(error, 'TOPIC_ALREADY_EXISTS')) throw error;
        }
      }
      // createTopics returns before the partitions have leaders: wait for them here.
      await waitForLeaders(
        describeTopics,
        topics.map((topic) => topic.topic),
      );
    },
    describeTopics,
    async topicConfigs(topic, names) {
      const [described] = await onceApplied(
        () =>
          open().describeConfigs({
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
    },
    async replaceTopicConfigs(topic, configs) {
      // AlterConfigs (not the incremental one) replaces the topic's whole config.
      await onceApplied(
        () =>
          open().alterConfigs({
            validateOnly: false,
            resources: [
              {
                resourceType: ConfigResourceTypes.TOPIC,
                resourceName: topic,
                configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
              },
            ],
          }),
        notAppliedYet,
      );
    },
    async brokerCount() {
      const metadata = await open().metadata({ topics: [], forceUpdate: true });
      return metadata.brokers.size;
    },
    async partitionEnds(topic) {
      const [description] = await describeTopics([topic]);
      const partitions = (description?.partitions ?? []).map((one) => one.partition);
      const ask = async (timestamp: bigint): Promise<Map<number, bigint>> => {
        const listed = await open().listOffsets({
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
      };
      const [low, high] = await Promise.all([ask(EARLIEST), ask(LATEST)]);
      return partitions.map((partition) => ({
        partition,
        low: (low.get(partition) ?? 0n).toString(),
        high: (high.get(partition) ?? 0n).toString(),
      }));
    },
    async committedOffsets(groupId, topics) {
      const descriptions = await describeTopics(topics);
      const [group] = await open().listConsumerGroupOffsets({
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
          committed.set(
            `${topic.name}\u0000${partition.partitionIndex}`,
            partition.committedOffset,
          );
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
    },
  };
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
