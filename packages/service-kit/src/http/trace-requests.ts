import {
  context,
  createTraceState,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import {
  childSpan,
  formatTraceparent,
  parseTraceparent,
  startTrace,
  TRACE_HEADERS,
  type TraceContext,
} from '@outbox-inbox/outbox/trace';
import type { FastifyInstance, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The request's span: a child of the caller's `traceparent`, or the start of a new trace.
     * Routes pass `traceHeaders(request.traceContext)` to `enqueue`, so the events they write
     * continue the trace across Kafka. Set by the first onRequest hook, before any route.
     */
    traceContext: TraceContext | undefined;
  }
}

/** The server span of each request, and the context in which its route runs. */
const serverSpans = new WeakMap<FastifyRequest, { span: Span; active: Context }>();

/**
 * W3C Trace Context on every request: reads `traceparent`/`tracestate`, gives the request its
 * own span, logs its trace id and answers it in `traceresponse` (Trace Context Level 2), so a
 * caller without a tracer of its own can still follow its request. With a tracer provider
 * registered, that span is a recorded server span and is active while the route runs, so the
 * spans the route starts (an outbox enqueue) are its children.
 */
export function installTraceContext(app: FastifyInstance): void {
  app.decorateRequest('traceContext', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const header = (name: string) => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const caller = parseTraceparent(
      header(TRACE_HEADERS.traceparent),
      header(TRACE_HEADERS.tracestate),
    );
    const { span, active } = startServerSpan(request, caller);
    serverSpans.set(request, { span, active });
    const own = span.spanContext();
    // Without a tracer provider the API's no-op span has no id of its own.
    request.traceContext =
      isSpanContextValid(own) && own.spanId !== caller?.spanId
        ? {
            traceId: own.traceId,
            spanId: own.spanId,
            flags: own.traceFlags.toString(16).padStart(2, '0'),
            ...(caller?.tracestate ? { tracestate: caller.tracestate } : {}),
          }
        : caller
          ? childSpan(caller)
          : startTrace();
    request.log = request.log.child({ traceId: request.traceContext.traceId });
    reply.header('traceresponse', formatTraceparent(request.traceContext));
  });
  // After the body is parsed (its stream events run outside any request context): the route
  // handler is called from `done`, inside the span's context.
  app.addHook('preHandler', (request, _reply, done) => {
    const server = serverSpans.get(request);
    if (server === undefined) return done();
    context.with(server.active, done);
  });
  app.addHook('onResponse', async (request, reply) => {
    endServerSpan(request, (span) => {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    });
  });
  app.addHook('onRequestAbort', async (request) => {
    endServerSpan(request, (span) =>
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' }),
    );
  });
}

/** Ends a request's span once, whichever of response and abort comes first. */
function endServerSpan(request: FastifyRequest, finish: (span: Span) => void): void {
  const server = serverSpans.get(request);
  if (server === undefined) return;
  serverSpans.delete(request);
  finish(server.span);
  server.span.end();
}

function startServerSpan(
  request: FastifyRequest,
  caller: TraceContext | undefined,
): { span: Span; active: Context } {
  const parent = caller
    ? trace.setSpanContext(ROOT_CONTEXT, {
        traceId: caller.traceId,
        spanId: caller.spanId,
        traceFlags: Number.parseInt(caller.flags, 16),
        isRemote: true,
        // Vendor data passes through every hop: the enqueue writes it into the row's headers.
        ...(caller.tracestate ? { traceState: createTraceState(caller.tracestate) } : {}),
      })
    : ROOT_CONTEXT;
  const route = request.routeOptions.url;
  const span = trace.getTracer('@outbox-inbox/service-kit').startSpan(
    route === undefined ? request.method : `${request.method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': request.method,
        'url.path': request.url.split('?')[0] ?? request.url,
        ...(route === undefined ? {} : { 'http.route': route }),
      },
    },
    parent,
  );
  return { span, active: trace.setSpan(parent, span) };
}
