import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { trace, type TracerProvider } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startEventSpan, tracingAvailable, type EventSpanFacts } from './spans.ts';
import { formatTraceparent, startTrace } from './trace-context.ts';

const run = promisify(execFile);

const facts = (headers: Record<string, string>): EventSpanFacts => ({
  operation: 'enqueue',
  topic: 'orders',
  eventId: '0190a1b2-0000-7000-8000-000000000001',
  eventType: 'OrderCreated',
  partitionKey: 'order-1',
  headers,
});

describe('event spans', () => {
  it('with the API but no tracer provider, do no span work and leave the headers as written', () => {
    expect(tracingAvailable()).toBe(false);
    const headers = { traceparent: formatTraceparent(startTrace()) };
    const span = startEventSpan(facts(headers));
    expect(span.propagate(headers)).toBe(headers);
    expect(span.activate(() => 'ran')).toBe('ran');
    span.end();
  });

  it('once a tracer provider is registered, start spans that the next hop continues', () => {
    const started: string[] = [];
    const provider: TracerProvider = {
      getTracer: () => ({
        startSpan: (name) => {
          started.push(name);
          return trace.wrapSpanContext({
            traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
            spanId: '00f067aa0ba902b7',
            traceFlags: 1,
          });
        },
        startActiveSpan: () => {
          throw new Error('not used by the library');
        },
      }),
    };
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      expect(tracingAvailable()).toBe(true);
      const span = startEventSpan(facts({}));
      expect(span.propagate({})).toEqual({
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      });
      span.end();
      expect(started).toEqual(['enqueue orders']);
    } finally {
      trace.disable();
    }
    expect(tracingAvailable()).toBe(false);
  });

  it('without @opentelemetry/api installed, are no-ops and load nothing', async () => {
    const spans = fileURLToPath(new URL('./spans.ts', import.meta.url));
    // A process in which the package cannot be resolved, as in an application without it.
    const script = `
      import { registerHooks } from 'node:module';
      registerHooks({
        resolve(specifier, context, next) {
          if (specifier === '@opentelemetry/api') {
            throw Object.assign(new Error('not installed'), { code: 'MODULE_NOT_FOUND' });
          }
          return next(specifier, context);
        },
      });
      const { startEventSpan, tracingAvailable } = await import(${JSON.stringify(spans)});
      const headers = { traceparent: ${JSON.stringify(formatTraceparent(startTrace()))} };
      const span = startEventSpan(${JSON.stringify(facts({}))});
      span.markDuplicate();
      span.end(new Error('failed'));
      console.log(JSON.stringify({
        available: tracingAvailable(),
        unchanged: span.propagate(headers) === headers,
        ran: span.activate(() => 'ran'),
      }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual({ available: false, unchanged: true, ran: 'ran' });
  });
});
