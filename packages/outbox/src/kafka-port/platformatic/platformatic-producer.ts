import { compatibilityPartitioner, Producer, type ProduceResult } from '@platformatic/kafka';
import type {
  EventProducer,
  OutgoingHeaders,
  OutgoingRecord,
  ProducerOptions,
  SendOptions,
  SendReport,
} from '../kafka-client.ts';
import { LazyClient } from './lazy-client.ts';
import { clientOptions, type PlatformaticConnection } from './platformatic-connection.ts';
import type { Outbound, RawProducer } from './raw-types.ts';
import { classifyRecordError, type RecordErrorKind } from '../shared/record-refusals.ts';
import { SendOutcomes } from '../shared/send-outcomes.ts';
import { withSendTimeout } from '../shared/send-timeout.ts';

/**
 * The relay's producer on @platformatic/kafka: idempotent (one request in flight, acks -1).
 * `close()` is final there, so a `connect` after a `disconnect` builds a new client.
 */
export function createPlatformaticProducer(
  connection: PlatformaticConnection,
  options: ProducerOptions,
): EventProducer {
  const producer = new LazyClient<RawProducer>(
    () =>
      new Producer<Buffer, Buffer, Buffer, Buffer>({
        ...clientOptions(connection),
        idempotent: true,
        acks: -1,
        partitioner: compatibilityPartitioner,
        autocreateTopics: options.allowAutoTopicCreation,
        // The relay retries in its own loop: few, short retries here.
        retries: 2,
        retryDelay: 200,
      }),
  );
  return {
    async connect() {
      producer.get();
    },
    async disconnect() {
      await producer.close();
    },
    send: (records, sendOptions) => sendRecords(producer.get(), options, records, sendOptions),
  };
}

interface Outgoing {
  readonly index: number;
  readonly topic: string;
  /** Records of one key share it; a record without a key has none to hold back. */
  readonly key: string | undefined;
  /** Chosen here (Java's murmur2 for keyed records) so each record's partition is known. */
  partition: number;
  readonly message: Outbound;
}

/**
 * Sends records in one `send` and, when Kafka refuses part of it, tells which it acknowledged
 * and which it refused. What @platformatic/kafka 2.x does decides the steps:
 * - One produce request goes to each partition leader; a broker appends or refuses each
 *   partition's record batch whole, and answers with one error code per partition.
 * - After ANY failed send the client drops its producer id and sequence numbers. The kafkajs
 *   adapter's trick (resend the same batch, the broker drops the copies) would append the
 *   appended partitions a second time here. So the partitions the broker answered with no error
 *   are taken as acked, and only the refused partitions are sent again, one record at a time.
 * - When a partition's fate is unknown (its broker did not answer) or its error is an outage,
 *   the send rejects: the caller sends everything again (a duplicate the inbox drops).
 * A topic that does not exist (and may not be created) is found from metadata before sending:
 * its records are refused (not final, as on kafkajs) and hold back later records of their keys.
 */
async function sendRecords(
  producer: RawProducer,
  options: ProducerOptions,
  records: readonly OutgoingRecord[],
  sendOptions: SendOptions,
): Promise<SendReport> {
  const deadline = performance.now() + sendOptions.timeoutMs;
  const outcome = new SendOutcomes<Outgoing>(records.length, (one) => one.partition);
  if (records.length === 0) return outcome.report();
  const outgoing = records.map(toOutgoing);
  const partitions = await withSendTimeout(
    partitionCounts(producer, options, [...new Set(outgoing.map((one) => one.topic))]),
    sendOptions.timeoutMs,
  );
  const sendable = placeOnPartitions(outgoing, partitions, outcome);
  if (sendable.length === 0) return outcome.report();
  let failure: unknown;
  try {
    await withSendTimeout(send(producer, sendable), remaining(deadline));
    outcome.ack(sendable);
    return outcome.report();
  } catch (error) {
    failure = error;
  }
  // Which partitions the broker appended, and why it refused the others.
  const answers = partitionAnswers(failure);
  const refusedGroups: Outgoing[][] = [];
  for (const group of byPartition(sendable)) {
    const first = group[0] as Outgoing;
    const answer = answers.get(partitionKey(first.topic, first.partition));
    if (answer === undefined) throw failure; // Not answered: its fate is unknown.
    if (answer.kind === 'outage') throw failure;
    if (answer.kind === 'acked') outcome.ack(group);
    else refusedGroups.push(group);
  }
  await sendOptions.keepAlive();
  await resendOneByOne(producer, refusedGroups, outcome, deadline);
  return outcome.report();
}

/**
 * Each record's partition, from the topic's partition count; a record of a topic Kafka does
 * not know is refused (not for good: the topic may be created), and later ones of its key wait.
 */
function placeOnPartitions(
  outgoing: readonly Outgoing[],
  partitions: ReadonlyMap<string, number>,
  outcome: SendOutcomes<Outgoing>,
): Outgoing[] {
  const sendable: Outgoing[] = [];
  for (const one of outgoing) {
    const count = partitions.get(one.topic);
    if (outcome.blocks(one)) continue;
    if (count === undefined) {
      outcome.refuse(one, {
        reason: `UNKNOWN_TOPIC_OR_PARTITION: the topic ${one.topic} does not exist`,
        final: false,
      });
      continue;
    }
    one.partition = place(one, count);
    one.message.partition = one.partition;
    sendable.push(one);
  }
  return sendable;
}

/** A refused partition appended none of its records: one record at a time, in order. */
async function resendOneByOne(
  producer: RawProducer,
  refusedGroups: readonly (readonly Outgoing[])[],
  outcome: SendOutcomes<Outgoing>,
  deadline: number,
): Promise<void> {
  for (const group of refusedGroups) {
    for (const one of group) {
      if (outcome.interrupted) return;
      if (outcome.blocks(one)) continue;
      try {
        await withSendTimeout(send(producer, [one]), remaining(deadline));
        outcome.ack([one]);
      } catch (error) {
        const kind = [...partitionAnswers(error).values()][0];
        if (kind?.kind === 'refused') outcome.refuse(one, kind);
        else outcome.interrupt(error);
      }
    }
  }
}

async function send(producer: RawProducer, group: readonly Outgoing[]): Promise<ProduceResult> {
  return producer.send({ messages: group.map((one) => one.message) });
}

/** Partitions of each topic; a topic missing (and not to be created) is left out. */
async function partitionCounts(
  producer: RawProducer,
  options: ProducerOptions,
  topics: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  // One topic per request: a missing topic fails the whole metadata request.
  for (const topic of topics) {
    try {
      const metadata = await producer.metadata({
        topics: [topic],
        autocreateTopics: options.allowAutoTopicCreation,
      });
      const found = metadata.topics.get(topic);
      if (found !== undefined) counts.set(topic, found.partitionsCount);
    } catch (error) {
      if (!isUnknownTopic(error)) throw error;
    }
  }
  return counts;
}

function isUnknownTopic(error: unknown): boolean {
  return error instanceof Error && /^Unknown topic /.test(error.message);
}

/** Java's murmur2 for keyed records (the same partition as any Kafka client); else random. */
function place(one: Outgoing, count: number): number {
  const key = one.message.key;
  if (key === undefined) return Math.floor(Math.random() * count);
  return compatibilityPartitioner(one.message, key) % count;
}

type Answer = { readonly kind: 'acked' } | RecordErrorKind;

/**
 * Per partition (`topic\0partition`), what a failed send's responses say. Only brokers that
 * answered are in it: `produced.offsets` holds the partitions of fully successful requests, a
 * ResponseError the per-partition error codes of the others (0: appended).
 */
function partitionAnswers(error: unknown): Map<string, Answer> {
  const answers = new Map<string, Answer>();
  const produced = (error as { produced?: ProduceResult } | null)?.produced;
  for (const offset of produced?.offsets ?? []) {
    answers.set(partitionKey(offset.topic, offset.partition), { kind: 'acked' });
  }
  walk(error, 0, answers);
  return answers;
}

interface ProduceResponseLike {
  responses?: {
    name: string;
    partitionResponses?: { index: number; errorCode: number; errorMessage?: string | null }[];
  }[];
}

interface ProtocolErrorLike {
  apiId?: string;
  apiCode?: number;
  canRetry?: boolean;
  message: string;
}

function walk(error: unknown, depth: number, answers: Map<string, Answer>): void {
  if (!(error instanceof Error) || depth > 6) return;
  const response = (error as { response?: ProduceResponseLike }).response;
  const nested = (error as { errors?: unknown[] }).errors ?? [];
  if (response?.responses !== undefined) {
    const byCode = new Map<number, ProtocolErrorLike>();
    for (const inner of nested) {
      const protocol = inner as ProtocolErrorLike;
      if (typeof protocol.apiCode === 'number') byCode.set(protocol.apiCode, protocol);
    }
    for (const topic of response.responses) {
      for (const partition of topic.partitionResponses ?? []) {
        const key = partitionKey(topic.name, partition.index);
        if (partition.errorCode === 0) {
          answers.set(key, { kind: 'acked' });
          continue;
        }
        const protocol = byCode.get(partition.errorCode);
        answers.set(
          key,
          classifyRecordError(
            protocol?.apiId ?? `KAFKA_ERROR_${partition.errorCode}`,
            partition.errorMessage ?? protocol?.message ?? '',
            protocol?.canRetry ?? true,
          ),
        );
      }
    }
  }
  for (const inner of nested) walk(inner, depth + 1, answers);
  walk(error.cause, depth + 1, answers);
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function toOutgoing(record: OutgoingRecord, index: number): Outgoing {
  const key = record.key === null ? undefined : toBuffer(record.key);
  return {
    index,
    topic: record.topic,
    key: key === undefined ? undefined : key.toString('hex'),
    partition: -1,
    message: {
      topic: record.topic,
      ...(key === undefined ? {} : { key }),
      ...(record.value === null ? {} : { value: toBuffer(record.value) }),
      headers: toHeaders(record.headers),
    } as Outbound,
  };
}

/**
 * Headers as a Map of Buffers. A repeated name gets one entry per value: distinct Buffer objects
 * are distinct Map keys, and each entry is written as its own header, in order.
 */
function toHeaders(headers: OutgoingHeaders): Map<Buffer, Buffer> {
  const map = new Map<Buffer, Buffer>();
  for (const [name, value] of Object.entries(headers)) {
    const values = Array.isArray(value) ? value : [value as string | Buffer];
    for (const one of values) map.set(Buffer.from(name), toBuffer(one));
  }
  return map;
}

function toBuffer(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** Groups by topic and partition, each group's records in send order. */
function byPartition(outgoing: readonly Outgoing[]): Outgoing[][] {
  const groups = new Map<string, Outgoing[]>();
  for (const one of outgoing) {
    const key = partitionKey(one.topic, one.partition);
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = []));
    group.push(one);
  }
  return [...groups.values()];
}

function remaining(deadline: number): number {
  return Math.max(0, Math.floor(deadline - performance.now()));
}
