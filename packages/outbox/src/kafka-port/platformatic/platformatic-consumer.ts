import {
  Consumer,
  consumerGroupChannel,
  MessagesStreamModes,
  type GroupAssignment,
} from '@platformatic/kafka';
import { backoffDelay } from '../../internal/backoff.ts';
import { FETCH_MAX_BYTES_PER_PARTITION, FETCH_MIN_BYTES } from '../../receive/consumer-settings.ts';
import { StateLog } from '../../internal/state-log.ts';
import { Wakeup } from '../../internal/wakeup.ts';
import type { Worker } from '../../worker.ts';
import type {
  BatchControl,
  ConsumedBatch,
  ConsumedMessage,
  ConsumerSpec,
  MessageHeaders,
} from '../kafka-client.ts';
import { FetchesInFlight } from './fetches-in-flight.ts';
import { clientOptions, type PlatformaticConnection } from './platformatic-connection.ts';
import type { RawConsumer, RawMessage, RawStream } from './raw-types.ts';
import { PartitionPositions, positionKey } from './stream-positions.ts';

/** One running consumer and what this member owns of the group. */
interface Member {
  readonly consumer: RawConsumer;
  /** Aborted when the member crashed or must close: the loop then closes it. */
  readonly ended: AbortController;
  /** `topic\0partition` of the partitions assigned at the last join. */
  owned: Set<string>;
  /** Set once the member closes or crashed: batches in progress are no longer active. */
  closing: boolean;
  /** Joins completed; a batch begun before the latest is re-read after the stream's rewind. */
  joins: number;
  /** Set by a join or a message out of place: the stream goes back to this member's positions. */
  rewindNeeded: boolean;
  /** Messages read but not handed over since the last rewind: it reads them again. */
  discarded: number;
  readonly positions: PartitionPositions;
  readonly fetches: FetchesInFlight;
  /** Restarts the member when a rebalance began and no join followed within the rebalance timeout. */
  rejoinDeadline: NodeJS.Timeout | undefined;
}

/**
 * Keeps a @platformatic/kafka consumer running: joins (retrying while Kafka is down), hands
 * over batches, and builds a new consumer after an error it does not recover from.
 *
 * The client's heartbeats run on their own timer, also while a batch is being handled, so a
 * long batch does not cost the member its partitions; `heartbeat()` has nothing to do.
 *
 * The client hands out a stream of single messages: what has arrived is grouped here into one
 * batch per partition, and the stream is not read while batches are handled (its buffer then
 * holds the next messages back). The stream reads on from where it fetched, not from the
 * committed offset: a batch left unfinished while its partition is still owned (the handler
 * threw) restarts the consumer, which then reads on from the group's committed offsets.
 *
 * A rebalance: while a join is under way the member owns nothing and hands nothing over. After
 * every join, and whenever a message is not the next offset of its partition (a fetch sent
 * before the join answers after it), the stream is moved back to the group's committed offsets
 * (`PartitionPositions`): nothing is skipped, nothing handed over out of order. A member that
 * owns nothing for the rebalance timeout after a rebalance began (its join failed) restarts;
 * `membership` shows it waiting meanwhile.
 */
export async function startPlatformaticConsumer(
  connection: PlatformaticConnection,
  spec: ConsumerSpec,
): Promise<Worker> {
  const members = new MemberLoop(connection, spec);
  await members.started;
  return { stop: () => members.stop() };
}

/** Builds a member, runs it until it ends, closes it, and builds the next while running. */
class MemberLoop {
  readonly #connection: PlatformaticConnection;
  readonly #spec: ConsumerSpec;
  readonly #state: StateLog;
  /** Ten beats per session: a member survives a stall of most of its session timeout. */
  readonly #heartbeatInterval: number;
  readonly #rebalanceTimeoutMs: number;
  /**
   * A stream that stopped fetching (seen after Kafka was killed: no error, no fetch) is treated
   * as a crash once it is silent for this long while this member waits for messages.
   */
  readonly #stallMs: number;
  readonly #pause = new Wakeup();
  readonly #done: Promise<void>;
  /** Resolves once the first attempt to start is over, whether it worked or is being retried. */
  readonly started: Promise<void>;
  #firstAttempt: () => void = () => undefined;
  #running = true;
  #current: Member | undefined;

  constructor(connection: PlatformaticConnection, spec: ConsumerSpec) {
    this.#connection = connection;
    this.#spec = spec;
    this.#state = new StateLog(spec.logger, { component: spec.name, groupId: spec.groupId });
    this.#heartbeatInterval = Math.max(500, Math.floor(spec.sessionTimeoutMs / 10));
    this.#rebalanceTimeoutMs = Math.max(spec.sessionTimeoutMs, spec.rebalanceTimeoutMs ?? 60_000);
    this.#stallMs = Math.max(4 * spec.maxWaitTimeMs, spec.sessionTimeoutMs, 5000);
    this.started = new Promise<void>((resolve) => (this.#firstAttempt = resolve));
    this.#done = this.#loop();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#pause.wake();
    const active = this.#current;
    if (active !== undefined) {
      active.closing = true;
      active.ended.abort();
    }
    await this.#done;
    this.#spec.membership?.hasWork(false);
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const member = this.#newMember();
      const unwatch = this.#watchGroup(member);
      this.#current = member;
      const stream = await this.#run(member);
      member.closing = true;
      this.#current = undefined;
      clearTimeout(member.rejoinDeadline);
      unwatch();
      // Closing talks to Kafka (leaving the group), which may be down: bounded.
      await bounded(stream?.close(), CLOSE_MS);
      await bounded(member.consumer.close(true), CLOSE_MS);
      member.fetches.close();
      if (this.#running && this.#state.failures > 0) {
        await this.#pause.wait(backoffDelay(this.#spec.backoff, Math.max(1, this.#state.failures)));
      }
    }
  }

  #newMember(): Member {
    const spec = this.#spec;
    const consumer: RawConsumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
      ...clientOptions(this.#connection),
      groupId: spec.groupId,
      sessionTimeout: spec.sessionTimeoutMs,
      rebalanceTimeout: this.#rebalanceTimeoutMs,
      heartbeatInterval: this.#heartbeatInterval,
      maxWaitTime: spec.maxWaitTimeMs,
      autocommit: false,
      retries: 2,
      retryDelay: 200,
    });
    return {
      consumer,
      ended: new AbortController(),
      owned: new Set(),
      closing: false,
      joins: 0,
      rewindNeeded: false,
      discarded: 0,
      positions: new PartitionPositions(),
      fetches: new FetchesInFlight(consumer),
      rejoinDeadline: undefined,
    };
  }

  #crash(member: Member, error: unknown): void {
    if (member.closing) return;
    this.#state.failed(this.#spec.name, error);
    member.closing = true;
    member.ended.abort();
  }

  /** Follows the member's group events; returns what stops following them. */
  #watchGroup(member: Member): () => void {
    const { consumer } = member;
    consumer.on('error', (error: unknown) => this.#crash(member, error));
    consumer.on('consumer:heartbeat:stalled', (event: unknown) =>
      this.#crash(member, new Error(`heartbeats stalled: ${JSON.stringify(event, bigintSafe)}`)),
    );
    consumer.on('consumer:group:join', (event: { assignments?: GroupAssignment[] | null }) => {
      member.owned = assignedKeys(event.assignments ?? consumer.assignments ?? []);
      this.#afterJoin(member);
    });
    const revoke = (): void => this.#revoke(member);
    consumer.on('consumer:group:rebalance', revoke);
    // A (re)join began (a heartbeat told of a rebalance or an eviction): until it assigns
    // partitions again this member owns nothing, so batches in progress stop and commit
    // nothing more. The client tells of a rejoin only on its diagnostics channel.
    const onGroupOperation = (message: unknown): void => {
      const context = message as { client?: unknown; operation?: unknown };
      if (context.client === consumer && context.operation === 'joinGroup') revoke();
    };
    consumerGroupChannel.start.subscribe(onGroupOperation);
    consumer.on('consumer:group:leave', revoke);
    return () => consumerGroupChannel.start.unsubscribe(onGroupOperation);
  }

  /** A rebalance began: the member owns nothing until a join, and restarts if none comes. */
  #revoke(member: Member): void {
    member.owned = new Set();
    if (member.closing || member.rejoinDeadline !== undefined) return;
    this.#spec.membership?.hasWork(true);
    const timeoutMs = this.#rebalanceTimeoutMs;
    member.rejoinDeadline = setTimeout(() => {
      const reason = `owned no partition for ${timeoutMs} ms after a rebalance began: its join failed`;
      this.#crash(member, new Error(reason));
    }, timeoutMs);
  }

  #afterJoin(member: Member): void {
    member.joins += 1;
    member.rewindNeeded = true;
    clearTimeout(member.rejoinDeadline);
    member.rejoinDeadline = undefined;
    this.#spec.membership?.progressed();
    this.#spec.membership?.hasWork(false);
    this.#state.ok(this.#spec.name);
  }

  /** Joins, then hands over what arrives until the member ends; returns its stream, if any. */
  async #run(member: Member): Promise<RawStream | undefined> {
    const spec = this.#spec;
    let stream: RawStream | undefined;
    try {
      stream = await member.consumer.consume({
        topics: [...spec.topics],
        mode: MessagesStreamModes.COMMITTED,
        fallbackMode: spec.fromBeginning ? 'earliest' : 'latest',
        autocommit: false,
        maxWaitTime: spec.maxWaitTimeMs,
        // Why these make full fetches under load and no wait at a low rate: consumer-settings.ts.
        minBytes: FETCH_MIN_BYTES,
        maxBytesPerPartition: FETCH_MAX_BYTES_PER_PARTITION,
        sessionTimeout: spec.sessionTimeoutMs,
        rebalanceTimeout: this.#rebalanceTimeoutMs,
        heartbeatInterval: this.#heartbeatInterval,
      });
      if (member.consumer.assignments !== null) {
        member.owned = assignedKeys(member.consumer.assignments);
        this.#afterJoin(member);
      }
      stream.on('error', (error: unknown) => this.#crash(member, error));
      // A 'readable' listener for the stream's whole life. With none (between two reads),
      // Node sets readableFlowing back to null, and the client fetches only while someone
      // reads: once its buffer had filled up, its fetch loop stopped for good.
      stream.on('readable', () => undefined);
      this.#firstAttempt();
      this.#state.ok(spec.name);
      await Promise.race([this.#consume(member, stream), aborted(member.ended.signal)]);
    } catch (error) {
      this.#crash(member, error);
      this.#firstAttempt();
    }
    return stream;
  }

  #ends(member: Member): boolean {
    return !this.#running || member.closing;
  }

  async #consume(member: Member, stream: RawStream): Promise<void> {
    for (;;) {
      if (member.rewindNeeded && !(await this.#rewind(member, stream))) return;
      const messages = await readAvailable(stream, member.ended.signal, this.#stallMs);
      if (messages === 'stalled') {
        // A member with no partitions has nothing to fetch.
        if (member.owned.size === 0) continue;
        this.#crash(
          member,
          new Error(`the message stream fetched nothing for ${this.#stallMs} ms`),
        );
        return;
      }
      if (messages === undefined || this.#ends(member)) return;
      member.positions.read(messages);
      if (member.rewindNeeded) {
        // Read from the positions before the latest join.
        member.discarded += messages.length;
        continue;
      }
      if (!(await this.#handOver(member, this.#next(member, messages)))) return;
    }
  }

  /** Moves the stream back to the committed offsets; false when the member must end. */
  async #rewind(member: Member, stream: RawStream): Promise<boolean> {
    member.rewindNeeded = false;
    const owned = [...member.owned].map(fromPartitionKey);
    const { consumer, fetches } = member;
    const result = await member.positions.rewind(consumer, stream, fetches, owned, this.#stallMs);
    if (result === 'stuck') {
      const reason = `a fetch stayed unanswered for ${this.#stallMs} ms while the stream rewound`;
      this.#crash(member, new Error(reason));
      return false;
    }
    member.discarded += result;
    if (member.discarded > 0) {
      this.#spec.logger.info(
        { component: this.#spec.name, discarded: member.discarded, partitions: owned.length },
        'stream moved back to the committed offsets after a rebalance or a message out of place; the messages read past them are read again',
      );
    }
    member.discarded = 0;
    return !this.#ends(member);
  }

  /** Of what was read, the messages to hand over: owned, and each the next of its partition. */
  #next(member: Member, messages: readonly RawMessage[]): RawMessage[] {
    const spec = this.#spec;
    // Messages of partitions this member does not own now (a join is under way, or they
    // went to another member): their owner reads them from the committed offsets.
    const mine = messages.filter((one) => member.owned.has(partitionKey(one.topic, one.partition)));
    member.discarded += messages.length - mine.length;
    const { next, outOfPlace } = member.positions.take(mine, (topic, partition, from, to) =>
      spec.logger.warn(
        { component: spec.name, topic, partition, from: from.toString(), to: to.toString() },
        'Kafka returned no message at these offsets on every read (transaction markers or compaction); reading on after them',
      ),
    );
    if (outOfPlace) {
      member.discarded += mine.length - next.length;
      member.rewindNeeded = true;
    }
    return next;
  }

  /** Hands the batches over, a few partitions at a time; false when the member must end. */
  async #handOver(member: Member, next: readonly RawMessage[]): Promise<boolean> {
    const batches = toBatches(next);
    const width = Math.max(1, this.#spec.partitionsConsumedConcurrently);
    for (let i = 0; i < batches.length && !member.rewindNeeded; i += width) {
      const results = await Promise.all(
        batches.slice(i, i + width).map((batch) => this.#handle(member, batch)),
      );
      if (results.includes(false)) {
        // Read again from the committed offsets: a new consumer.
        member.closing = true;
        member.ended.abort();
        return false;
      }
      if (this.#ends(member)) return false;
    }
    return true;
  }

  #owns(member: Member, topic: string, partition: number): boolean {
    return this.#running && !member.closing && member.owned.has(partitionKey(topic, partition));
  }

  /** Hands one partition's batch over; false when it was left unfinished while still owned. */
  async #handle(member: Member, batch: RawBatch): Promise<boolean> {
    const { topic, partition } = batch;
    const last = batch.raw.at(-1) as RawMessage;
    const joinsAtStart = member.joins;
    const committed: { through?: bigint } = {};
    try {
      await this.#spec.eachBatch(batch.batch, this.#control(member, batch, committed));
    } catch (error) {
      this.#state.failed(this.#spec.name, error);
      return !this.#owns(member, topic, partition) || member.joins !== joinsAtStart;
    }
    return (
      !this.#owns(member, topic, partition) ||
      // A join came in between: the stream's rewind reads the rest again.
      member.joins !== joinsAtStart ||
      (committed.through !== undefined && committed.through >= last.offset)
    );
  }

  /** What the port's batch handler may ask about its batch; `committed` notes its commits. */
  #control(member: Member, batch: RawBatch, committed: { through?: bigint }): BatchControl {
    const { topic, partition } = batch;
    const last = batch.raw.at(-1) as RawMessage;
    const spec = this.#spec;
    return {
      active: () => this.#owns(member, topic, partition),
      heartbeat: async () => undefined,
      commit: async (lastDone) => {
        const done = BigInt(lastDone);
        committed.through = done;
        if (!this.#owns(member, topic, partition)) return;
        const epoch = batch.raw.find((one) => one.offset === done)?.leaderEpoch ?? last.leaderEpoch;
        try {
          await member.consumer.commit({
            offsets: [{ topic, partition, offset: done + 1n, leaderEpoch: epoch }],
          });
        } catch (error) {
          spec.logger.warn(
            { component: spec.name, topic, partition, offset: (done + 1n).toString(), err: error },
            'offset commit failed; the batch may be delivered again (duplicates are dropped)',
          );
        }
      },
    };
  }
}

interface RawBatch {
  readonly topic: string;
  readonly partition: number;
  readonly raw: readonly RawMessage[];
  readonly batch: ConsumedBatch;
}

/** How long closing a consumer may take before it is left to itself. */
const CLOSE_MS = 5000;

async function bounded(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (promise === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

/**
 * What the stream holds now (at least one message); undefined once it ended or stopped;
 * 'stalled' when it completed no fetch for `stallMs`.
 */
async function readAvailable(
  stream: RawStream,
  stop: AbortSignal,
  stallMs: number,
): Promise<RawMessage[] | undefined | 'stalled'> {
  for (;;) {
    const messages: RawMessage[] = [];
    for (let one = stream.read() as RawMessage | null; one !== null; one = stream.read()) {
      messages.push(one);
    }
    if (messages.length > 0) return messages;
    if (stream.destroyed || stream.readableEnded) return undefined;
    const woken = await new Promise<boolean | 'stalled'>((resolve) => {
      const onReadable = (): void => finish(false);
      const onEnd = (): void => finish(true);
      const onFetch = (): void => void watchdog.refresh();
      const watchdog = setTimeout(() => finish('stalled'), stallMs);
      const finish = (ended: boolean | 'stalled'): void => {
        clearTimeout(watchdog);
        stream.off('fetch', onFetch);
        stop.removeEventListener('abort', onEnd);
        stream.off('readable', onReadable);
        stream.off('end', onEnd);
        stream.off('close', onEnd);
        resolve(ended);
      };
      stream.on('readable', onReadable);
      stream.on('fetch', onFetch);
      stream.on('end', onEnd);
      stream.on('close', onEnd);
      if (stop.aborted) finish(true);
      else stop.addEventListener('abort', onEnd);
    });
    if (woken === 'stalled') return 'stalled';
    if (woken) return undefined;
  }
}

/** One batch per partition, in the order the partitions first appear, offsets in order. */
function toBatches(messages: readonly RawMessage[]): RawBatch[] {
  const groups = new Map<string, RawMessage[]>();
  for (const one of messages) {
    const key = partitionKey(one.topic, one.partition);
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(one);
  }
  return [...groups.values()].map((raw) => {
    const first = raw[0] as RawMessage;
    return {
      topic: first.topic,
      partition: first.partition,
      raw,
      batch: { topic: first.topic, partition: first.partition, messages: raw.map(toConsumed) },
    };
  });
}

function toConsumed(message: RawMessage): ConsumedMessage {
  return {
    offset: message.offset.toString(),
    key: message.key ?? null,
    value: message.value ?? null,
    headers: toHeaders(message.headerEntries),
    timestamp: message.timestamp.toString(),
  };
}

/** Header entries (a name may repeat) as the port's headers: a list when a name repeats. */
function toHeaders(entries: readonly [Buffer, Buffer][] | undefined): MessageHeaders {
  const headers: Record<string, Buffer | Buffer[]> = {};
  for (const [name, value] of entries ?? []) {
    const key = name.toString('utf8');
    const before = headers[key];
    if (before === undefined) headers[key] = value;
    else if (Array.isArray(before)) before.push(value);
    else headers[key] = [before, value];
  }
  return headers;
}

async function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}

function assignedKeys(assignments: readonly GroupAssignment[]): Set<string> {
  return new Set(
    assignments.flatMap(({ topic, partitions }) => partitions.map((p) => partitionKey(topic, p))),
  );
}

const partitionKey = positionKey;

function fromPartitionKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
