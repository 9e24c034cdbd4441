import { randomBytes } from 'node:crypto';

/** W3C Trace Context: one trace, the span that is the parent of the next one, its flags. */
export interface TraceContext {
  /** 32 lower-case hex digits, never all zero. */
  readonly traceId: string;
  /** 16 lower-case hex digits, never all zero: the span the next hop is a child of. */
  readonly spanId: string;
  /** Two hex digits; `01` = sampled. */
  readonly flags: string;
  /** Vendor data passed along unchanged (`tracestate`), when there is any. */
  readonly tracestate?: string;
}

/** The header names W3C Trace Context uses on HTTP, and this library on Kafka and in rows. */
export const TRACE_HEADERS = Object.freeze({
  traceparent: 'traceparent',
  tracestate: 'tracestate',
});

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

/** Reads a `traceparent` (version 00); undefined when absent or malformed, as the spec asks. */
export function parseTraceparent(
  traceparent: string | undefined,
  tracestate?: string,
): TraceContext | undefined {
  const match = TRACEPARENT.exec(traceparent?.trim() ?? '');
  if (!match) return undefined;
  const [, traceId = '', spanId = '', flags = ''] = match;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return tracestate ? { traceId, spanId, flags, tracestate } : { traceId, spanId, flags };
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`;
}

/** A new trace, for work that arrived without one. */
export function startTrace(): TraceContext {
  return { traceId: randomHex(16), spanId: randomHex(8), flags: '01' };
}

/** The next hop of the same trace: same trace id and flags, a span id of its own. */
export function childSpan(parent: TraceContext): TraceContext {
  return { ...parent, spanId: randomHex(8) };
}

/**
 * The trace an event (its outbox row, Kafka message or inbox row headers) belongs to, or
 * undefined when it carries none.
 */
export function traceOf(headers: Readonly<Record<string, string>>): TraceContext | undefined {
  return parseTraceparent(headers[TRACE_HEADERS.traceparent], headers[TRACE_HEADERS.tracestate]);
}

/**
 * Headers that continue `context` in the next hop: pass them as an enqueued event's
 * `headers`, and the relay sends them as Kafka headers, the inbox stores them and handlers
 * see them in `event.headers`. Each hop is a child span of the one before it.
 */
export function traceHeaders(context: TraceContext | undefined): Record<string, string> {
  if (context === undefined) return {};
  const next = childSpan(context);
  const headers: Record<string, string> = { [TRACE_HEADERS.traceparent]: formatTraceparent(next) };
  if (next.tracestate) headers[TRACE_HEADERS.tracestate] = next.tracestate;
  return headers;
}

function randomHex(bytes: number): string {
  for (;;) {
    const hex = randomBytes(bytes).toString('hex');
    if (!ALL_ZERO.test(hex)) return hex;
  }
}
