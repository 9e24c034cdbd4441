import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import type { Stoppable } from '../roles/roles.ts';

/**
 * Makes this process record spans: a tracer provider whose spans carry `service.name`, and
 * the AsyncLocalStorage context manager, so the span of an HTTP request or an inbox handler
 * is the parent of the spans started while it runs (the outbox library's enqueue among them).
 * `stop()` flushes what is left and unregisters both.
 */
export function registerTracing(options: {
  readonly serviceName: string;
  readonly spanProcessors: readonly SpanProcessor[];
}): Stoppable {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [...options.spanProcessors],
  });
  if (
    !context.setGlobalContextManager(contextManager) ||
    !trace.setGlobalTracerProvider(provider)
  ) {
    context.disable();
    throw new Error('a tracer provider is registered already in this process');
  }
  return {
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/**
 * Exports spans over OTLP/HTTP (protobuf) to `endpoint` + `/v1/traces`, batched, when an
 * endpoint is configured; registers nothing otherwise. The exporter's modules are loaded only
 * then: a process that exports nothing does not pay for them at start.
 */
export async function startOtlpTracing(
  serviceName: string,
  endpoint: string | undefined,
): Promise<Stoppable | undefined> {
  if (endpoint === undefined) return undefined;
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  const base = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
  const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', base).toString() });
  return registerTracing({ serviceName, spanProcessors: [new BatchSpanProcessor({ exporter })] });
}
