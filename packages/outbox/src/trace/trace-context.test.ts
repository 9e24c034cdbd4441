import { describe, expect, it } from 'vitest';
import {
  childSpan,
  formatTraceparent,
  parseTraceparent,
  startTrace,
  traceHeaders,
  traceOf,
} from './trace-context.ts';

const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('W3C trace context', () => {
  it('reads a valid traceparent and writes it back unchanged', () => {
    const context = parseTraceparent(traceparent, 'vendor=1');
    expect(context).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      flags: '01',
      tracestate: 'vendor=1',
    });
    expect(context && formatTraceparent(context)).toBe(traceparent);
  });

  it.each([
    undefined,
    '',
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7',
  ])('ignores the malformed traceparent %j', (value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('continues a trace: same trace id and flags, a new span id, tracestate kept', () => {
    const parent = parseTraceparent(traceparent, 'vendor=1');
    const headers = traceHeaders(parent);
    const next = traceOf(headers);
    expect(next?.traceId).toBe(parent?.traceId);
    expect(next?.flags).toBe('01');
    expect(next?.spanId).not.toBe(parent?.spanId);
    expect(headers['tracestate']).toBe('vendor=1');
    expect(traceHeaders(undefined)).toEqual({});
  });

  it('starts traces whose ids are valid and differ', () => {
    const a = startTrace();
    const b = childSpan(startTrace());
    expect(parseTraceparent(formatTraceparent(a))).toEqual(a);
    expect(a.traceId).not.toBe(b.traceId);
  });
});
