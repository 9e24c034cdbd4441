import { describe, expect, it } from 'vitest';
import type { IHeaders, KafkaMessage } from 'kafkajs';
import { parseMessage } from './parse-message.ts';

const message = (
  overrides: { key?: Buffer | null; value?: Buffer | null; headers?: IHeaders } = {},
): KafkaMessage => ({
  key: Buffer.from('order-1'),
  value: Buffer.from('{"amount":10}'),
  timestamp: '1700000000000',
  attributes: 0,
  offset: '42',
  headers: {
    event_id: Buffer.from('0190F5E4-0000-7000-8000-000000000001'),
    event_type: Buffer.from('OrderCreated'),
    aggregate_type: Buffer.from('order'),
    aggregate_id: Buffer.from('order-1'),
    occurred_at: Buffer.from('2024-05-01T10:00:00.000Z'),
    traceparent: Buffer.from('00-abc-def-01'),
  },
  ...overrides,
});

describe('parseMessage', () => {
  it('reads key, JSON value and headers into an event', () => {
    const result = parseMessage('order.events', 2, message());
    expect(result).toEqual({
      ok: true,
      event: {
        eventId: '0190f5e4-0000-7000-8000-000000000001',
        eventType: 'OrderCreated',
        aggregateType: 'order',
        aggregateId: 'order-1',
        partitionKey: 'order-1',
        payload: { amount: 10 },
        occurredAt: new Date('2024-05-01T10:00:00.000Z'),
        topic: 'order.events',
        partition: 2,
        offset: '42',
        headers: expect.objectContaining({ traceparent: '00-abc-def-01' }),
      },
      payloadJson: '{"amount":10}',
    });
  });

  it('hands on the JSON text as received, also when the parsed value cannot be serialised again', () => {
    const depth = 10_000;
    const value = `{"amount":10,"deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const result = parseMessage('t', 0, message({ value: Buffer.from(value) }));
    expect(result.ok && result.payloadJson).toBe(value);
    expect(() => JSON.stringify(result.ok && result.event.payload)).toThrow(RangeError);
  });

  it('turns a RangeError of the validator into a reason', () => {
    const overflowing = (): string => {
      throw new RangeError('Maximum call stack size exceeded');
    };
    expect(parseMessage('t', 0, message(), overflowing)).toEqual({
      ok: false,
      reason: 'validator threw: Maximum call stack size exceeded',
    });
  });

  it.each([
    ['no event_id', { headers: { event_type: Buffer.from('X') } }, 'missing header event_id'],
    [
      'a bad event_id',
      { headers: { event_id: 'nope', event_type: 'X' } },
      'header event_id is not a UUID: nope',
    ],
    [
      'no event_type',
      { headers: { event_id: '0190f5e4-0000-7000-8000-000000000001' } },
      'missing header event_type',
    ],
    ['a tombstone', { value: null }, 'empty message value (tombstone)'],
    ['invalid JSON', { value: Buffer.from('{oops') }, expect.stringMatching(/^value is not JSON/)],
  ])('rejects %s with a reason, never throws', (_name, overrides, reason) => {
    expect(parseMessage('t', 0, message(overrides))).toEqual({ ok: false, reason });
  });

  it('refuses bytes that are not UTF-8 instead of replacing them with U+FFFD', () => {
    const bad = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"\xff"}
    expect(parseMessage('t', 0, message({ value: bad }))).toEqual({
      ok: false,
      reason: 'value is not valid UTF-8',
    });
    expect(parseMessage('t', 0, message({ key: Buffer.from([0xc3]) }))).toEqual({
      ok: false,
      reason: 'message key is not valid UTF-8',
    });
    const headers = { ...message().headers, traceparent: Buffer.from([0xe2, 0x82]) };
    expect(parseMessage('t', 0, message({ headers }))).toEqual({
      ok: false,
      reason: 'header traceparent is not valid UTF-8',
    });
  });

  it('skips a header without a value (null on the wire) and keeps the last of repeated ones', () => {
    const headers: IHeaders = {
      ...message().headers,
      empty: undefined,
      repeated: [Buffer.from('first'), Buffer.from('second')],
    };
    // kafkajs decodes a header without a value as null, which its types do not admit.
    Object.assign(headers, { empty: null });
    const result = parseMessage('t', 0, message({ headers }));
    expect(result.ok && result.event.headers).toEqual(
      expect.objectContaining({ repeated: 'second' }),
    );
    expect(result.ok && result.event.headers).not.toHaveProperty('empty');
  });

  it('uses the validator, and a throwing validator is a reason too', () => {
    expect(parseMessage('t', 0, message(), () => 'schema: amount must be positive')).toEqual({
      ok: false,
      reason: 'schema: amount must be positive',
    });
    const throwing = (): string => {
      throw new Error('boom');
    };
    expect(parseMessage('t', 0, message(), throwing)).toEqual({
      ok: false,
      reason: 'validator threw: boom',
    });
  });

  it('keeps keyless messages of a partition together under one synthetic key', () => {
    const result = parseMessage('t', 3, message({ key: null }));
    expect(result.ok && result.event.partitionKey).toBe('t/3');
  });
});
