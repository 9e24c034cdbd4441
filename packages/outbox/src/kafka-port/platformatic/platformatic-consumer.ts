import {
  Consumer,
  consumerGroupChannel,
  MessagesStreamModes,
  type GroupAssignment,
  type Message,
  type MessagesStream,
} from '@platformatic/kafka';
import { backoffDelay } from '../../internal/backoff.ts';
import { FETCH_MAX_BYTES_PER_PARTITION, FETCH_MIN_BYTES } from '../../kafka/consumer-settings.ts';
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
import type { PlatformaticConnection } from './platformatic-connection.ts';
import { PartitionPositions, positionKey } from './stream-positions.ts';

type RawConsumer = Consumer<Buffer, Buffer, Buffer, Buffer>;
type RawMessage = Message<Buffer, Buffer, Buffer, Buffer>;
type RawStream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;

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
  const state = new StateLog(spec.logger, { component: spec.name, groupId: spec.groupId });
  // Ten beats per session: a member survives a stall of most of its session timeout.
  const heartbeatInterval = Math.max(500, Math.floor(spec.sessionTimeoutMs / 10));
  const pause = new Wakeup();
  let running = true;
  let current: Member | undefined;
  let firstAttempt: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (firstAttempt = resolve));

  const rebalanceTimeoutMs = Math.max(spec.sessionTimeoutMs, spec.rebalanceTimeoutMs ?? 60_000);
  const owns = (member: Member, topic: string, partition: number): boolean =>
    running && !member.closing && member.owned.has(partitionKey(topic, partition));

  /** Hands one partition's batch over; false when it was left unfinished while still owned. */
  const handle = async (member: Member, batch: RawBatch): Promise<boolean> => {
    const { topic, partition } = batch;
    const last = batch.raw.at(-1) as RawMessage;
    const joinsAtStart = member.joins;
    let committedThrough: bigint | undefined;
    const control: BatchControl = {
      active: () => owns(member, topic, partition),
      heartbeat: async () => undefined,
      async commit(lastDone) {
        const done = BigInt(lastDone);
        committedThrough = done;
        if (!owns(member, topic, partition)) return;
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
    try {
      await spec.eachBatch(batch.batch, control);
    } catch (error) {
      state.failed(spec.name, error);
      return !owns(member, topic, partition) || member.joins !== joinsAtStart;
    }
    return (
      !owns(member, topic, partition) ||
      // A join came in between: the stream's rewind reads the rest again.
      member.joins !== joinsAtStart ||
      (committedThrough !== undefined && committedThrough >= last.offset)
    );
  };

  // A stream that stopped fetching (seen after Kafka was killed: no error, no fetch) is
  // treated as a crash once it is silent for this long while this member waits for messages.
  const stallMs = Math.max(4 * spec.maxWaitTimeMs, spec.sessionTimeoutMs, 5000);

  const consume = async (
    member: Member,
    stream: RawStream,
    crash: (error: unknown) => void,
  ): Promise<void> => {
    // Messages read but not handed over since the last rewind: it reads them again.
    let discarded = 0;
    for (;;) {
      if (member.rewindNeeded) {
        member.rewindNeeded = false;
        const owned = [...member.owned].map(fromPartitionKey);
        const result = await member.positions.rewind(
          member.consumer,
          stream,
          member.fetches,
          owned,
          stallMs,
        );
        if (result === 'stuck') {
          crash(new Error(`a fetch stayed unanswered for ${stallMs} ms while the stream rewound`));
          return;
        }
        discarded += result;
        if (discarded > 0) {
          spec.logger.info(
            { component: spec.name, discarded, partitions: owned.length },
            'stream moved back to the committed offsets after a rebalance or a message out of place; the messages read past them are read again',
          );
        }
        discarded = 0;
        if (!running || member.closing) return;
      }
      const messages = await readAvailable(stream, member.ended.signal, stallMs);
      if (messages === 'stalled') {
        // A member with no partitions has nothing to fetch.
        if (member.owned.size === 0) continue;
        crash(new Error(`the message stream fetched nothing for ${stallMs} ms`));
        return;
      }
      if (messages === undefined || !running || member.closing) return;
      member.positions.read(messages);
      if (member.rewindNeeded) {
        // Read from the positions before the latest join.
        discarded += messages.length;
        continue;
      }
      // Messages of partitions this member does not own now (a join is under way, or they
      // went to another member): their owner reads them from the committed offsets.
      const mine = messages.filter((one) =>
        member.owned.has(partitionKey(one.topic, one.partition)),
      );
      discarded += messages.length - mine.length;
      const { next, outOfPlace } = member.positions.take(mine, (topic, partition, from, to) =>
        spec.logger.warn(
          { component: spec.name, topic, partition, from: from.toString(), to: to.toString() },
          'Kafka returned no message at these offsets on every read (transaction markers or compaction); reading on after them',
        ),
      );
      if (outOfPlace) {
        discarded += mine.length - next.length;
        member.rewindNeeded = true;
      }
      const batches = toBatches(next);
      const width = Math.max(1, spec.partitionsConsumedConcurrently);
      for (let i = 0; i < batches.length && !member.rewindNeeded; i += width) {
        const results = await Promise.all(
          batches.slice(i, i + width).map((batch) => handle(member, batch)),
        );
        if (results.includes(false)) {
          // Read again from the committed offsets: a new consumer.
          member.closing = true;
          member.ended.abort();
          return;
        }
        if (!running || member.closing) return;
      }
    }
  };

  const afterJoin = (member: Member): void => {
    member.joins += 1;
    member.rewindNeeded = true;
    clearTimeout(member.rejoinDeadline);
    member.rejoinDeadline = undefined;
    spec.membership?.progressed();
    spec.membership?.hasWork(false);
    state.ok(spec.name);
  };

  const loop = async (): Promise<void> => {
    while (running) {
      const consumer: RawConsumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
        clientId: connection.clientId,
        bootstrapBrokers: [...connection.brokers],
        groupId: spec.groupId,
        sessionTimeout: spec.sessionTimeoutMs,
        rebalanceTimeout: rebalanceTimeoutMs,
        heartbeatInterval,
        maxWaitTime: spec.maxWaitTimeMs,
        autocommit: false,
        retries: 2,
        retryDelay: 200,
        ...(connection.timeoutMs === undefined ? {} : { timeout: connection.timeoutMs }),
      });
      const member: Member = {
        consumer,
        ended: new AbortController(),
        owned: new Set(),
        closing: false,
        joins: 0,
        rewindNeeded: false,
        positions: new PartitionPositions(),
        fetches: new FetchesInFlight(consumer),
        rejoinDeadline: undefined,
      };
      const crash = (error: unknown): void => {
        if (member.closing) return;
        state.failed(spec.name, error);
        member.closing = true;
        member.ended.abort();
      };
      consumer.on('error', crash);
      consumer.on('consumer:heartbeat:stalled', (event: unknown) =>
        crash(new Error(`heartbeats stalled: ${JSON.stringify(event, bigintSafe)}`)),
      );
      consumer.on('consumer:group:join', (event: { assignments?: GroupAssignment[] | null }) => {
        member.owned = assignedKeys(event.assignments ?? consumer.assignments ?? []);
        afterJoin(member);
      });
      const revoke = (): void => {
        member.owned = new Set();
        if (member.closing || member.rejoinDeadline !== undefined) return;
        spec.membership?.hasWork(true);
        member.rejoinDeadline = setTimeout(
          () =>
            crash(
              new Error(
                `owned no partition for ${rebalanceTimeoutMs} ms after a rebalance began: its join failed`,
              ),
            ),
          rebalanceTimeoutMs,
        );
      };
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
      current = member;
      let stream: RawStream | undefined;
      try {
        stream = await consumer.consume({
          topics: [...spec.topics],
          mode: MessagesStreamModes.COMMITTED,
          fallbackMode: spec.fromBeginning ? 'earliest' : 'latest',
          autocommit: false,
          maxWaitTime: spec.maxWaitTimeMs,
          // Why these make full fetches under load and no wait at a low rate: consumer-settings.ts.
          minBytes: FETCH_MIN_BYTES,
          maxBytesPerPartition: FETCH_MAX_BYTES_PER_PARTITION,
          sessionTimeout: spec.sessionTimeoutMs,
          rebalanceTimeout: rebalanceTimeoutMs,
          heartbeatInterval,
        });
        if (consumer.assignments !== null) {
          member.owned = assignedKeys(consumer.assignments);
          afterJoin(member);
        }
        stream.on('error', crash);
        // A 'readable' listener for the stream's whole life. With none (between two reads),
        // Node sets readableFlowing back to null, and the client fetches only while someone
        // reads: once its buffer had filled up, its fetch loop stopped for good.
        stream.on('readable', () => undefined);
        firstAttempt();
        state.ok(spec.name);
        await Promise.race([consume(member, stream, crash), aborted(member.ended.signal)]);
      } catch (error) {
        crash(error);
        firstAttempt();
      }
      member.closing = true;
      current = undefined;
      clearTimeout(member.rejoinDeadline);
      consumerGroupChannel.start.unsubscribe(onGroupOperation);
      // Closing talks to Kafka (leaving the group), which may be down: bounded.
      await bounded(stream?.close(), CLOSE_MS);
      await bounded(consumer.close(true), CLOSE_MS);
      member.fetches.close();
      if (running && state.failures > 0) {
        await pause.wait(backoffDelay(spec.backoff, Math.max(1, state.failures)));
      }
    }
  };
  const done = loop();
  await started;
  return {
    async stop() {
      running = false;
      pause.wake();
      const active = current;
      if (active !== undefined) {
        active.closing = true;
        active.ended.abort();
      }
      await done;
      spec.membership?.hasWork(false);
    },
  };
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
