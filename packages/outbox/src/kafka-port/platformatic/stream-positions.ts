import type { FetchesInFlight } from './fetches-in-flight.ts';
import type { RawConsumer, RawMessage, RawStream } from './raw-types.ts';

/** How many times in a row the same gap must come back from a clean read before it is believed. */
const GAP_CONFIRMATIONS = 3;

/**
 * The next offset this member is to hand over, per owned partition, and the check that every
 * message read is that one. The client's stream reads on from where it last fetched, not from
 * where this member is: a fetch in flight across a rebalance is answered after the client has
 * gone back to the committed offsets, and moves its position past them again. Its messages are
 * then a gap (offsets after ones never handed over) or a rewind (offsets handed over already);
 * handing them over would skip offsets, or store an event after a later one of its key.
 */
export class PartitionPositions {
  /** `topic\0partition` → the next offset to hand over; absent while unknown. */
  readonly #next = new Map<string, bigint>();
  /** The last gap seen per partition, and how many clean reads in a row returned it. */
  readonly #gaps = new Map<string, { from: bigint; to: bigint; times: number }>();
  /**
   * The lowest offset this member read of each partition, owned or not: where a partition the
   * group never committed is read again from (what came before it, no member read).
   */
  readonly #firstRead = new Map<string, bigint>();

  /** Notes what the stream returned, before anything is handed over or discarded. */
  read(messages: readonly RawMessage[]): void {
    for (const one of messages) {
      const key = positionKey(one.topic, one.partition);
      const first = this.#firstRead.get(key);
      if (first === undefined || one.offset < first) this.#firstRead.set(key, one.offset);
    }
  }

  /**
   * Splits what was read into the messages to hand over (each the next of its partition, in
   * order) and tells whether a message out of place was met: the caller then discards the rest
   * and calls `rewind`. A gap that clean reads returned GAP_CONFIRMATIONS times in a row is
   * Kafka's own (transaction markers, compaction): it is believed and `believed` is told.
   */
  take(
    messages: readonly RawMessage[],
    believed: (topic: string, partition: number, from: bigint, to: bigint) => void,
  ): { readonly next: RawMessage[]; readonly outOfPlace: boolean } {
    const next: RawMessage[] = [];
    for (const one of messages) {
      const key = positionKey(one.topic, one.partition);
      const expected = this.#next.get(key);
      if (expected !== undefined && one.offset !== expected) {
        const gap = this.#gaps.get(key);
        if (one.offset < expected || gap?.from !== expected || gap.to !== one.offset) {
          this.#gaps.set(key, { from: expected, to: one.offset, times: 1 });
          return { next, outOfPlace: true };
        }
        if (gap.times + 1 < GAP_CONFIRMATIONS) {
          gap.times += 1;
          return { next, outOfPlace: true };
        }
        believed(one.topic, one.partition, expected, one.offset);
      }
      this.#gaps.delete(key);
      this.#next.set(key, one.offset + 1n);
      next.push(one);
    }
    return { next, outOfPlace: false };
  }

  /**
   * Moves the stream back to where this member is: for each owned partition the group's
   * committed offset, or, without one, the lowest offset this member read of it (a message
   * handed over and not committed may not have been handled). Stops the stream's fetching, waits until no fetch is in flight,
   * discards what the stream holds (all read from the old positions) and sets the new ones.
   * Returns how many messages were discarded (they are read again), or 'stuck' when a fetch
   * stayed in flight for `settleMs`: the caller then restarts the member.
   */
  async rewind(
    consumer: RawConsumer,
    stream: RawStream,
    fetches: FetchesInFlight,
    owned: readonly { readonly topic: string; readonly partition: number }[],
    settleMs: number,
  ): Promise<number | 'stuck'> {
    stream.pause();
    try {
      const committed = await committedOffsets(consumer, owned);
      if (!(await fetches.settled(settleMs))) return 'stuck';
      let discarded = 0;
      for (let one = stream.read() as RawMessage | null; one !== null; one = stream.read()) {
        discarded += 1;
        this.read([one]);
      }
      const kept = new Map<string, bigint>();
      for (const { topic, partition } of owned) {
        const key = positionKey(topic, partition);
        const position = committed.get(key) ?? this.#firstRead.get(key);
        if (position === undefined) continue;
        kept.set(key, position);
        // The client's own key for a partition's fetch position.
        stream.offsetsToFetch.set(`${topic}:${partition}`, position);
      }
      this.#next.clear();
      for (const [key, position] of kept) this.#next.set(key, position);
      return discarded;
    } finally {
      stream.resume();
    }
  }
}

/** The group's committed offsets of `owned`, by `topic\0partition`; none for partitions without. */
async function committedOffsets(
  consumer: RawConsumer,
  owned: readonly { readonly topic: string; readonly partition: number }[],
): Promise<Map<string, bigint>> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of owned) {
    const partitions = byTopic.get(topic) ?? [];
    partitions.push(partition);
    byTopic.set(topic, partitions);
  }
  const result = new Map<string, bigint>();
  if (byTopic.size === 0) return result;
  const offsets = await consumer.listCommittedOffsets({
    topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
  });
  for (const [topic, partitions] of byTopic) {
    const committed = offsets.get(topic);
    for (const partition of partitions) {
      const offset = committed?.[partition];
      if (offset !== undefined && offset >= 0n) result.set(positionKey(topic, partition), offset);
    }
  }
  return result;
}

export function positionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
