import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import { formatTraceparent, traceOf, TRACE_HEADERS } from './trace-context.ts';

type Api = typeof OpenTelemetry;

/** The hop of an event's journey a span stands for (`messaging.operation.name`). */
export type EventOperation = 'enqueue' | 'publish' | 'store' | 'handle' | 'apply';

/** What a span says about the event it is about. */
export interface EventSpanFacts {
  readonly operation: EventOperation;
  readonly topic: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly partitionKey: string;
  /**
   * The headers of the message or row whose trace the span continues (its `traceparent` is
   * the parent). Enqueue passes the caller's headers: they are the parent only when no span
   * is active.
   */
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly consumerGroup?: string;
  readonly partition?: number;
  readonly offset?: string;
}

/** A started span; a no-op when `@opentelemetry/api` is not installed. */
export interface EventSpan {
  /** `headers` with this span as the `traceparent` the next hop continues; unchanged when not traced. */
  propagate(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>>;
  /** The event was a redelivery that the receiver dropped. */
  markDuplicate(): void;
  /** Runs `work` with this span active, so spans started inside it are its children. */
  activate<T>(work: () => T): T;
  /** Ends the span, failed when `error` is given. */
  end(error?: unknown): void;
}

const NO_SPAN: EventSpan = Object.freeze({
  propagate: (headers: Readonly<Record<string, string>>) => headers,
  markDuplicate: () => undefined,
  activate: <T>(work: () => T) => work(),
  end: () => undefined,
});

/** `messaging.operation.type` and span kind of each hop (OpenTelemetry messaging conventions). */
const OPERATION_TYPE = {
  enqueue: 'create',
  publish: 'send',
  store: 'process',
  handle: 'process',
  apply: 'process',
} as const satisfies Record<EventOperation, string>;

let api: Api | null | undefined;

/**
 * `@opentelemetry/api`, loaded on first use; null when the application did not install it (it
 * is an optional peer dependency). Synchronous, so the first event pays one failed lookup.
 */
function loadApi(): Api | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)('@opentelemetry/api') as Api;
    } catch {
      api = null;
    }
  }
  return api;
}

let noopProvider: OpenTelemetry.TracerProvider | undefined;

/**
 * True once the application registered a tracer provider (an SDK). Until then the API's global
 * proxy delegates to its no-op provider, and every span would be work for nothing. A provider
 * that is not the API's proxy (another copy of the API registered it) counts as registered.
 */
function providerRegistered(otel: Api): boolean {
  const provider = otel.trace.getTracerProvider();
  if (!(provider instanceof otel.ProxyTracerProvider)) return true;
  noopProvider ??= new otel.ProxyTracerProvider().getDelegate();
  return provider.getDelegate() !== noopProvider;
}

/**
 * True when spans are recorded: the API is installed and a tracer provider registered. Call
 * sites skip all span work otherwise (checked per batch, so a provider registered later counts).
 */
export function tracingAvailable(): boolean {
  const otel = loadApi();
  return otel !== null && providerRegistered(otel);
}

/**
 * Starts the span of one hop of an event. Without `@opentelemetry/api`, or before a tracer
 * provider is registered, it returns a shared no-op whose `propagate` leaves the headers as the
 * application wrote them.
 */
export function startEventSpan(facts: EventSpanFacts): EventSpan {
  const otel = loadApi();
  if (otel === null || !providerRegistered(otel)) return NO_SPAN;
  const parent = parentContext(otel, facts);
  const tracer = otel.trace.getTracer('@outbox-inbox/outbox');
  const type = OPERATION_TYPE[facts.operation];
  const span = tracer.startSpan(
    `${facts.operation} ${facts.topic}`,
    {
      kind:
        type === 'create'
          ? otel.SpanKind.PRODUCER
          : type === 'send'
            ? otel.SpanKind.CLIENT
            : otel.SpanKind.CONSUMER,
      attributes: attributesOf(facts, type),
    },
    parent,
  );
  // The API's no-op tracer hands back the parent's own context: not a span of its own.
  const own =
    otel.isSpanContextValid(span.spanContext()) &&
    span.spanContext().spanId !== otel.trace.getSpanContext(parent)?.spanId;
  const active = otel.trace.setSpan(parent, span);
  return {
    propagate: (headers) => (own ? withTraceHeaders(headers, span.spanContext()) : headers),
    markDuplicate: () => span.setAttribute('messaging.outbox.duplicate', true),
    activate: (work) => otel.context.with(active, work),
    end: (error) => {
      if (error !== undefined) {
        if (error instanceof Error) span.recordException(error);
        span.setStatus({
          code: otel.SpanStatusCode.ERROR,
          message: error instanceof Error ? error.message : String(error),
        });
      }
      span.end();
    },
  };
}

/**
 * A consumer's hop continues the trace in the message it handles. Enqueue is a child of the
 * active span (an HTTP request, an inbox handler); with none, of the trace the caller put in
 * the event's headers.
 */
function parentContext(otel: Api, facts: EventSpanFacts): OpenTelemetry.Context {
  const active = otel.context.active();
  if (facts.operation === 'enqueue' && otel.trace.getSpan(active) !== undefined) return active;
  const carried = facts.headers === undefined ? undefined : traceOf(facts.headers);
  if (carried === undefined) return facts.operation === 'enqueue' ? active : otel.ROOT_CONTEXT;
  return otel.trace.setSpanContext(otel.ROOT_CONTEXT, {
    traceId: carried.traceId,
    spanId: carried.spanId,
    traceFlags: Number.parseInt(carried.flags, 16),
    isRemote: true,
    ...(carried.tracestate ? { traceState: otel.createTraceState(carried.tracestate) } : {}),
  });
}

function attributesOf(facts: EventSpanFacts, type: string): OpenTelemetry.Attributes {
  return {
    'messaging.system': 'kafka',
    'messaging.operation.type': type,
    'messaging.operation.name': facts.operation,
    'messaging.destination.name': facts.topic,
    'messaging.message.id': facts.eventId,
    'messaging.kafka.message.key': facts.partitionKey,
    'messaging.outbox.event_type': facts.eventType,
    ...(facts.consumerGroup === undefined
      ? {}
      : { 'messaging.consumer.group.name': facts.consumerGroup }),
    ...(facts.partition === undefined
      ? {}
      : { 'messaging.destination.partition.id': String(facts.partition) }),
    ...(facts.offset === undefined ? {} : { 'messaging.kafka.offset': Number(facts.offset) }),
  };
}

function withTraceHeaders(
  headers: Readonly<Record<string, string>>,
  context: OpenTelemetry.SpanContext,
): Record<string, string> {
  // The caller's tracestate belonged to the trace context this span replaces.
  const rest = { ...headers };
  delete rest[TRACE_HEADERS.tracestate];
  const traceparent = formatTraceparent({
    traceId: context.traceId,
    spanId: context.spanId,
    flags: context.traceFlags.toString(16).padStart(2, '0'),
  });
  const tracestate = context.traceState?.serialize();
  return {
    ...rest,
    [TRACE_HEADERS.traceparent]: traceparent,
    ...(tracestate ? { [TRACE_HEADERS.tracestate]: tracestate } : {}),
  };
}
