import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TObject } from '@sinclair/typebox';
import { eventSchemas, isEventType, type EventPayloads, type EventType } from './events.ts';

// Compiled once at import: checking an event is then a plain function call on the hot path.
const checks = new Map<string, TypeCheck<TObject>>(
  Object.entries(eventSchemas).map(([type, schema]) => [type, TypeCompiler.Compile(schema)]),
);

/**
 * Checks a received payload against its event type's schema. Returns why it is invalid (for
 * the log and for parking the message where an operator can see it), or undefined when valid.
 */
export function validate(eventType: string, payload: unknown): string | undefined {
  const check = isEventType(eventType) ? checks.get(eventType) : undefined;
  if (!check) return `unknown event type "${eventType}"`;
  const error = check.Errors(payload).First();
  if (!error) return undefined;
  return `${eventType}${error.path || '/'}: ${error.message}`;
}

/** Narrows `payload` to the payload of `eventType`; see {@link validate} for the reason. */
export function isEvent<T extends EventType>(
  eventType: T,
  payload: unknown,
): payload is EventPayloads[T] {
  return checks.get(eventType)?.Check(payload) ?? false;
}
