import type { IHeaders } from 'kafkajs';

/** Header names every published event carries (besides the event's own extra headers). */
export const EVENT_HEADERS = Object.freeze({
  eventId: 'event_id',
  eventType: 'event_type',
  aggregateType: 'aggregate_type',
  aggregateId: 'aggregate_id',
  occurredAt: 'occurred_at',
});

/** kafkajs header values may be Buffers, strings or arrays of them; keep the last as UTF-8. */
export function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last === undefined) continue;
    result[name] = typeof last === 'string' ? last : last.toString('utf8');
  }
  return result;
}
