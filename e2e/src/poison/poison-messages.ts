import { randomBytes, randomUUID } from 'node:crypto';
import { topics } from '@outbox-inbox/contracts';
import type { IHeaders } from 'kafkajs';

/** One message no receiver can take as an event: it must be parked, with `reason`. */
export interface PoisonMessage {
  readonly name: string;
  readonly topic: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: IHeaders;
  /** What the parked row's reason must say. */
  readonly reason: RegExp;
}

const text = (value: string): Buffer => Buffer.from(value, 'utf8');
/** Bytes that are not UTF-8: a lone continuation byte, an overlong form, a lone surrogate. */
const notUtf8 = Buffer.from([0x80, 0xc0, 0xaf, 0xed, 0xa0, 0x80]);

/** The headers of a well-formed event of `type`, under a fresh event id. */
function eventHeaders(type: string, extra: IHeaders = {}): IHeaders {
  return {
    event_id: randomUUID(),
    event_type: type,
    aggregate_type: 'order',
    aggregate_id: randomUUID(),
    occurred_at: new Date().toISOString(),
    ...extra,
  };
}

/** An OrderCreated that passes its contract, for an order that does not exist. */
function orderCreated(extra: Record<string, unknown> = {}): Buffer {
  return text(
    JSON.stringify({
      schemaVersion: 1,
      orderId: randomUUID(),
      customerId: 'poison',
      amount: 100,
      currency: 'EUR',
      createdAt: new Date().toISOString(),
      ...extra,
    }),
  );
}

/** What makes a message garbage on any topic: the parser refuses it before any receiver. */
function parseFailures(topic: string, type: string): PoisonMessage[] {
  const key = text(randomUUID());
  return [...unreadable(topic, type, key), ...notAnEvent(topic, type, key)];
}

/** Bytes the parser cannot read as an event at all: not UTF-8, not JSON, or no headers. */
function unreadable(topic: string, type: string, key: Buffer): PoisonMessage[] {
  return [
    {
      name: 'random bytes, no headers',
      topic,
      key: randomBytes(16),
      value: randomBytes(256),
      headers: {},
      reason: /missing header event_id/,
    },
    {
      name: 'value not UTF-8',
      topic,
      key,
      value: Buffer.concat([text('{"a":"'), notUtf8, text('"}')]),
      headers: eventHeaders(type),
      reason: /value is not valid UTF-8/,
    },
    {
      name: 'header value not UTF-8',
      topic,
      key,
      value: text('{}'),
      headers: eventHeaders(type, { event_type: notUtf8 }),
      reason: /header event_type is not valid UTF-8/,
    },
    {
      name: 'not JSON',
      topic,
      key,
      value: text('{"orderId": '),
      headers: eventHeaders(type),
      reason: /value is not JSON/,
    },
  ];
}

/** Readable messages that are still no event: an id, a value or a type missing or wrong. */
function notAnEvent(topic: string, type: string, key: Buffer): PoisonMessage[] {
  return [
    {
      name: 'no event_id',
      topic,
      key,
      value: text('{}'),
      headers: { event_type: type },
      reason: /missing header event_id/,
    },
    {
      name: 'event_id not a UUID',
      topic,
      key,
      value: text('{}'),
      headers: eventHeaders(type, { event_id: '-1; DROP TABLE orders' }),
      reason: /event_id is not a UUID/,
    },
    {
      name: 'tombstone',
      topic,
      key,
      value: null,
      headers: eventHeaders(type),
      reason: /tombstone/,
    },
    {
      name: 'unknown event type',
      topic,
      key,
      value: text('{"schemaVersion":1}'),
      headers: eventHeaders('OrderExploded'),
      reason: /unknown event type/,
    },
    {
      name: 'fails its contract',
      topic,
      key,
      value: text('{"schemaVersion":1,"orderId":"not-a-uuid"}'),
      headers: eventHeaders(type),
      reason: /./,
    },
  ];
}

/**
 * Messages that pass every check of the parser and the contract and that PostgreSQL refuses
 * to store (a NUL in jsonb or in text). Only payment-service's inbox stores what it receives
 * before applying it, so these go to order.events.
 */
function refusedByPostgres(): PoisonMessage[] {
  const topic = topics.orderEvents;
  const refused = /PostgreSQL refused the data/;
  return [
    {
      name: 'NUL in the payload',
      topic,
      key: text(randomUUID()),
      value: orderCreated({ note: '\u0000' }),
      headers: eventHeaders('OrderCreated'),
      reason: refused,
    },
    {
      name: 'NUL in a header',
      topic,
      key: text(randomUUID()),
      value: orderCreated(),
      headers: eventHeaders('OrderCreated', { traceparent: 'a\u0000b' }),
      reason: refused,
    },
    {
      name: 'NUL in the key',
      topic,
      key: text(`order-\u0000-${randomUUID()}`),
      value: orderCreated(),
      headers: eventHeaders('OrderCreated'),
      reason: refused,
    },
    {
      name: 'key not UTF-8',
      topic,
      key: notUtf8,
      value: orderCreated(),
      headers: eventHeaders('OrderCreated'),
      reason: /key is not valid UTF-8/,
    },
  ];
}

/** `orderCreated` with one extra field given as JSON text: any text, however deep. */
function orderCreatedWith(extraJson: string): Buffer {
  const head = orderCreated().toString('utf8').slice(0, -1);
  return text(`${head},"extra":${extraJson}}`);
}

const nestedArrays = (depth: number, inner = ''): string =>
  `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

/**
 * OrderCreated events that pass their contract (the extra field is allowed) and push a receiver
 * to its limits: nesting deeper than JSON.stringify can recurse (JSON.parse takes any depth;
 * re-serialising the parsed value overflowed the stack and stalled the partition), deeper than
 * PostgreSQL's jsonb parser takes (`max_stack_depth`), a value near the size limit, 100,000
 * keys. Each ends parked: where it would store fine, a NUL that jsonb refuses is in it, so the
 * message goes the whole way to PostgreSQL and back.
 */
function oversized(): PoisonMessage[] {
  const topic = topics.orderEvents;
  const message = (name: string, extraJson: string, reason: RegExp): PoisonMessage => ({
    name,
    topic,
    key: text(randomUUID()),
    value: orderCreatedWith(extraJson),
    headers: eventHeaders('OrderCreated'),
    reason,
  });
  const tooDeep = /PostgreSQL refused the data: 54001 stack depth limit exceeded/;
  const nul = /PostgreSQL refused the data: 22P05 /;
  const keys = Array.from({ length: 100_000 }, (_, i) => `"${i.toString(36)}":0`);
  return [
    message('arrays nested 5,000 deep around a NUL', nestedArrays(5_000, '"\\u0000"'), nul),
    message('arrays nested 100,000 deep', nestedArrays(100_000), tooDeep),
    message(
      'objects nested 100,000 deep',
      `${'{"a":'.repeat(100_000)}0${'}'.repeat(100_000)}`,
      tooDeep,
    ),
    message(
      'a string of 900 KiB ending in a NUL',
      JSON.stringify(`${'x'.repeat(900 * 1024)}\u0000`),
      nul,
    ),
    message('100,000 keys and a NUL', `{${keys.join(',')},"nul":"\\u0000"}`, nul),
  ];
}

/** Near the broker's default `message.max.bytes` (1 MiB): bytes that are not an event. */
function nearSizeLimit(topic: string): PoisonMessage {
  return {
    name: 'near the size limit',
    topic,
    key: text(randomUUID()),
    value: Buffer.concat([notUtf8, randomBytes(900 * 1024)]),
    headers: eventHeaders('OrderCreated'),
    reason: /value is not valid UTF-8/,
  };
}

/** The whole corpus, on both topics: each message must end parked with its reason. */
export function poisonCorpus(): PoisonMessage[] {
  return [
    ...parseFailures(topics.orderEvents, 'OrderCreated'),
    ...refusedByPostgres(),
    ...oversized(),
    nearSizeLimit(topics.orderEvents),
    ...parseFailures(topics.paymentEvents, 'PaymentCompleted'),
  ];
}
