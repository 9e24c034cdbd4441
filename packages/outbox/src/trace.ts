/**
 * `@outbox-inbox/outbox/trace`: the W3C trace context an order's events carry from hop to hop
 * in their headers, so one trace follows an order through both services.
 */
export {
  TRACE_HEADERS,
  childSpan,
  formatTraceparent,
  parseTraceparent,
  startTrace,
  traceHeaders,
  traceOf,
} from './trace/trace-context.ts';
export type { TraceContext } from './trace/trace-context.ts';
