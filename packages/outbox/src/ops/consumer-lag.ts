import type { KafkaAdmin, KafkaClient } from '../kafka-port/kafka-client.ts';

export interface ConsumerLagOptions {
  /** A scrape within this long of the last read answers from it (default 5000). */
  readonly cacheMs: number;
  /** Longest a scrape waits for Kafka before it answers with the last values (default 2000). */
  readonly timeoutMs: number;
}

export const DEFAULT_CONSUMER_LAG_OPTIONS: ConsumerLagOptions = Object.freeze({
  cacheMs: 5000,
  timeoutMs: 2000,
});

/** Lag of one partition: messages after the group's committed offset. */
export interface PartitionLag {
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly lag: number;
}

/**
 * Kafka consumer lag per group and partition (high watermark minus committed offset), read with
 * an admin client on scrape. The lag that matters is the one no database table shows: an
 * inbox writer that cannot store a batch commits nothing, and its lag grows. Consumers register
 * their group with `watch`. A scrape never fails or hangs on Kafka: reads are cached briefly,
 * one at a time per group, and a slow or failed one leaves the last values.
 */
export class ConsumerLag {
  readonly #options: ConsumerLagOptions;
  readonly #groups = new Set<WatchedGroup>();

  constructor(options: ConsumerLagOptions) {
    this.#options = options;
  }

  /** Reports `groupId`'s lag on `topics` until the returned function is called. */
  watch(kafka: KafkaClient, groupId: string, topics: readonly string[]): () => Promise<void> {
    const group = new WatchedGroup(kafka, groupId, topics);
    this.#groups.add(group);
    return async () => {
      this.#groups.delete(group);
      await group.close();
    };
  }

  /** The lag of every watched group, as fresh as the cache and the timeout allow. */
  async read(): Promise<PartitionLag[]> {
    const groups = await Promise.all([...this.#groups].map((group) => group.read(this.#options)));
    return groups.flat();
  }
}

class WatchedGroup {
  readonly #kafka: KafkaClient;
  readonly #groupId: string;
  readonly #topics: readonly string[];
  #admin: KafkaAdmin | undefined;
  #last: PartitionLag[] = [];
  #readAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;
  #closed = false;

  constructor(kafka: KafkaClient, groupId: string, topics: readonly string[]) {
    this.#kafka = kafka;
    this.#groupId = groupId;
    this.#topics = topics;
  }

  async read(options: ConsumerLagOptions): Promise<PartitionLag[]> {
    if (this.#closed || Date.now() - this.#readAt < options.cacheMs) return this.#last;
    this.#pending ??= this.#refresh().finally(() => (this.#pending = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.timeoutMs)));
    try {
      await Promise.race([this.#pending, late]);
    } finally {
      clearTimeout(timer);
    }
    return this.#last;
  }

  /** Disconnects; a read still under way (Kafka slow or down) disconnects when it ends. */
  async close(): Promise<void> {
    this.#closed = true;
    void this.#pending?.finally(() => this.#dropAdmin());
    await this.#dropAdmin();
  }

  async #refresh(): Promise<void> {
    try {
      const admin = await this.#connectedAdmin();
      const committed = await admin.committedOffsets(this.#groupId, this.#topics);
      const rows: PartitionLag[] = [];
      for (const topic of this.#topics) {
        for (const end of await admin.partitionEnds(topic)) {
          const at =
            committed.find((one) => one.topic === topic && one.partition === end.partition)
              ?.offset ?? '-1';
          // Nothing committed yet: the group will read the partition from its start.
          const from = BigInt(at) < 0n ? BigInt(end.low) : BigInt(at);
          const lag = BigInt(end.high) - from;
          rows.push({
            group: this.#groupId,
            topic,
            partition: end.partition,
            lag: Number(lag > 0n ? lag : 0n),
          });
        }
      }
      this.#last = rows;
      this.#readAt = Date.now();
    } catch {
      // Kafka unreachable: keep the last values; a fresh admin connects on the next read.
      await this.#dropAdmin();
    }
  }

  async #connectedAdmin(): Promise<KafkaAdmin> {
    if (this.#admin !== undefined) return this.#admin;
    // No retries of its own: the next scrape is the retry.
    const admin = this.#kafka.createAdmin({ retries: 0 });
    this.#admin = admin;
    await admin.connect();
    return admin;
  }

  async #dropAdmin(): Promise<void> {
    const admin = this.#admin;
    this.#admin = undefined;
    await admin?.disconnect().catch(() => undefined);
  }
}
