import type { BackoffOptions } from '../internal/backoff.ts';
import type { Logger } from '../logger.ts';
import type { ProgressReporter } from '../worker.ts';
import type { Worker } from '../worker.ts';

/**
 * The library's port to Kafka: what the relay, the consumers and the operations need, and no
 * more. An adapter (kafka-port/kafkajs, kafka-port/platformatic) implements it on one client;
 * nothing else in the library imports a Kafka client.
 */
export interface KafkaClient {
  /** The adapter's name, for logs and metrics ('kafkajs', 'platformatic'). */
  readonly name: string;
  /**
   * The relay's producer: idempotent, acks -1, one request in flight per partition, Kafka's
   * Java-compatible murmur2 partitioner for keyed records.
   */
  createProducer(options: ProducerOptions): EventProducer;
  /**
   * Runs a consumer group member until stopped: connects (retrying while Kafka is down),
   * hands over batches, and recovers from the client's crashes by itself. Resolves once the
   * first attempt to start is over, whether it worked or is being retried.
   */
  startConsumer(spec: ConsumerSpec): Promise<Worker>;
  /** An admin client; connect before use, disconnect after. */
  createAdmin(options?: AdminOptions): KafkaAdmin;
}

export interface ProducerOptions {
  /** Whether a send to a missing topic creates it (the broker's `auto.create.topics.enable`). */
  readonly allowAutoTopicCreation: boolean;
}

/** Header values as sent: a repeated name carries its values in order. */
export type OutgoingHeaders = Readonly<
  Record<string, string | Buffer | readonly (string | Buffer)[]>
>;

/** One record to produce. */
export interface OutgoingRecord {
  readonly topic: string;
  readonly key: string | Buffer | null;
  readonly value: string | Buffer | null;
  readonly headers: OutgoingHeaders;
}

/** What became of one record of a send. */
export type RecordOutcome =
  /** Appended to `partition` (acks -1: by every in-sync replica). */
  | { readonly kind: 'acked'; readonly partition: number }
  /** The broker refused the record itself; `final` when a retry cannot pass. */
  | { readonly kind: 'refused'; readonly reason: string; readonly final: boolean }
  /** Not sent for sure: Kafka failed first, or an earlier record of its key was refused. */
  | { readonly kind: 'unsent' };

export interface SendReport {
  /** One outcome per record, in the order the records were given. */
  readonly outcomes: readonly RecordOutcome[];
  /**
   * Kafka or the network failed while refused records were being pinned down; the records
   * left `unsent` may be sent again. Undefined when none.
   */
  readonly interruption: unknown;
}

export interface SendOptions {
  /** The whole send, pinning down included, ends within this (the batch's locks wait on it). */
  readonly timeoutMs: number;
  /** Called before the resends that pin refused records down (keeps the caller's session busy). */
  readonly keepAlive: () => Promise<unknown>;
}

export interface EventProducer {
  connect(): Promise<void>;
  /**
   * Sends records, keeping the order of each key's records, and tells what became of each.
   * A record the broker refuses holds back the later records of its key in this send, and
   * its partition's other records are not sent twice because of it. Rejects when Kafka (or the
   * network) failed before any outcome was known: the caller sends the records again, with
   * this producer or, after `disconnect`, a new one.
   */
  send(records: readonly OutgoingRecord[], options: SendOptions): Promise<SendReport>;
  disconnect(): Promise<void>;
}

/** Header values as received: bytes, a list when a name repeats, null without a value. */
export type MessageHeaders = Readonly<
  Record<string, Buffer | string | null | undefined | readonly (Buffer | string | null)[]>
>;

export interface ConsumedMessage {
  /** The message's offset, as a decimal string (offsets exceed 2^53). */
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers?: MessageHeaders | undefined;
  /** Milliseconds since the epoch, as a decimal string (the producer's or the broker's time). */
  readonly timestamp: string;
}

/** Messages of one partition, in offset order. */
export interface ConsumedBatch {
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly ConsumedMessage[];
}

/** What a batch handler may do while it works. */
export interface BatchControl {
  /**
   * False once this member is stopping or the group gave the batch's partition to another
   * member: stop working on the batch and commit nothing more of it.
   */
  active(): boolean;
  /** Tells the group this member is alive (cheap: adapters skip a beat sent just before). */
  heartbeat(): Promise<void>;
  /**
   * Commits the group's offset for the batch's partition: the next message to read is the one
   * after `lastDone`. A failure (Kafka going away) is logged, not thrown: what was done is
   * durable, and at worst the messages are delivered again and dropped as duplicates.
   */
  commit(lastDone: string): Promise<void>;
}

export interface ConsumerSpec {
  /** For logs: 'inbox writer', 'dedup consumer'. */
  readonly name: string;
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a group with no committed offset starts: the oldest message, or new ones only. */
  readonly fromBeginning: boolean;
  /** How long a member that died without leaving keeps its partitions. */
  readonly sessionTimeoutMs: number;
  /** Longest a fetch waits for new messages. */
  readonly maxWaitTimeMs: number;
  /**
   * How long the group waits for its members to rejoin in a rebalance (default 60000, at least
   * the session timeout). A member still owning nothing this long after a rebalance began (its
   * join failed) restarts, on the adapters that can tell.
   */
  readonly rebalanceTimeoutMs?: number | undefined;
  /** Partitions whose batches are handled at the same time. */
  readonly partitionsConsumedConcurrently: number;
  readonly logger: Logger;
  /** Between attempts to start again after a failure. */
  readonly backoff: BackoffOptions;
  /** Handles one batch; the offsets are committed by the handler, through `control`. */
  readonly eachBatch: (batch: ConsumedBatch, control: BatchControl) => Promise<void>;
  /**
   * Told while the member waits to be given partitions again after a rebalance began (work
   * waiting: its stall shows in `/health/ready`), by the adapters that can tell.
   */
  readonly membership?: ProgressReporter | undefined;
}

export interface AdminOptions {
  /** Retries of each request; 0 when the caller's own loop is the retry. */
  readonly retries?: number;
}

export interface NewTopic {
  readonly topic: string;
  readonly partitions: number;
  /** The broker's default when left out. */
  readonly replicationFactor?: number;
  readonly configs?: Readonly<Record<string, string>>;
}

/** A partition's first and next offsets (`low`, `high`: the high watermark). */
export interface PartitionEnds {
  readonly partition: number;
  readonly low: string;
  readonly high: string;
}

/** A group's committed offset of one partition; '-1' when it has none. */
export interface CommittedOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

export interface TopicDescription {
  readonly topic: string;
  readonly partitions: readonly {
    readonly partition: number;
    /** The leader's broker id; negative while the partition has none. */
    readonly leader: number;
    readonly replicas: number;
  }[];
}

export interface KafkaAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  listTopics(): Promise<string[]>;
  /**
   * Creates the topics that do not exist yet (others are left alone), and returns once every
   * partition of the given topics has a leader.
   */
  createTopics(topics: readonly NewTopic[]): Promise<void>;
  /** Waits a while for a topic just created that a broker does not know yet. */
  describeTopics(topics: readonly string[]): Promise<TopicDescription[]>;
  /** The current values of the named settings of a topic (a name Kafka lacks is left out). */
  topicConfigs(topic: string, names: readonly string[]): Promise<Record<string, string>>;
  /**
   * Makes these the topic's settings: the ones given get their values, and every other
   * setting set on the topic goes back to the broker's default (a declaration is the whole truth).
   */
  replaceTopicConfigs(topic: string, configs: Readonly<Record<string, string>>): Promise<void>;
  /** How many brokers the cluster has. */
  brokerCount(): Promise<number>;
  partitionEnds(topic: string): Promise<PartitionEnds[]>;
  committedOffsets(groupId: string, topics: readonly string[]): Promise<CommittedOffset[]>;
}
