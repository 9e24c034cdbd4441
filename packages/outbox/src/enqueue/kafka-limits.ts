import type { OutgoingRecord } from '../kafka-port/kafka-client.ts';

/**
 * Kafka's default `message.max.bytes` (broker) and `max.message.bytes` (topic): 1 MiB + 12.
 * The broker applies it to a whole record batch, and a producer writes all the records of one
 * send that go to one partition as ONE record batch, so it bounds a partition's share of a
 * relay batch, not just one event.
 */
export const KAFKA_DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

/** Fixed part of a record batch (base offset, length, epoch, magic, crc, ... producer fields). */
export const RECORD_BATCH_HEADER_BYTES = 61;

/**
 * The largest record (as `recordBytes` counts it) that fits a record batch of its own under
 * the default limit: the relay's default for `maxEventBytes` and `maxBatchBytes`.
 */
export const KAFKA_DEFAULT_MAX_RECORD_BYTES =
  KAFKA_DEFAULT_MAX_MESSAGE_BYTES - RECORD_BATCH_HEADER_BYTES;

/**
 * enqueue's default maximum: just under 1 MiB, below the relay's default limit. enqueue
 * measures the JSON that `JSON.stringify` writes, while the relay sends PostgreSQL's jsonb
 * text, which puts a space after every ',' and ':'; the gap leaves room for that in ordinary
 * payloads. An event that still ends up too large for Kafka is set aside by the relay (FAILED),
 * it does not stop it.
 */
export const DEFAULT_MAX_EVENT_BYTES = 1_000_000;

/**
 * Per-record framing of Kafka's v2 record format, taken at its largest: length, attributes,
 * timestamp and offset deltas, key and value lengths, header count (varints).
 */
const RECORD_FRAMING_BYTES = 36;
/** Per header: the name and value lengths (varints, at their largest). */
const HEADER_FRAMING_BYTES = 10;

/** Bytes one message takes in a produce request's record batch (an upper bound). */
export function recordBytes(message: Pick<OutgoingRecord, 'key' | 'value' | 'headers'>): number {
  let bytes = RECORD_FRAMING_BYTES + byteLength(message.key) + byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers)) {
    const values: readonly (string | Buffer)[] =
      typeof value === 'string' || Buffer.isBuffer(value) ? [value] : value;
    for (const one of values) {
      bytes += HEADER_FRAMING_BYTES + Buffer.byteLength(name) + byteLength(one);
    }
  }
  return bytes;
}

function byteLength(value: string | Buffer | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'string' ? Buffer.byteLength(value) : value.length;
}

/** Kafka's topic-name rule (`Topic.validate`): legal characters, at most 249, not '.' or '..'. */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]+$/;
const MAX_TOPIC_LENGTH = 249;

/** Why Kafka would refuse `topic` as a topic name, or undefined when it is a legal one. */
export function invalidTopicReason(topic: string): string | undefined {
  if (topic === '') return 'topic is empty';
  if (topic === '.' || topic === '..') return `topic cannot be '${topic}'`;
  if (topic.length > MAX_TOPIC_LENGTH) {
    return `topic is ${topic.length} characters long, more than Kafka's ${MAX_TOPIC_LENGTH}`;
  }
  if (!LEGAL_TOPIC.test(topic)) {
    return `topic ${JSON.stringify(topic)} has characters outside Kafka's [a-zA-Z0-9._-]`;
  }
  return undefined;
}
