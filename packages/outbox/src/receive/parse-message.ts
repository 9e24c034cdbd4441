import type { ConsumedMessage } from '../kafka-port/kafka-client.ts';
import { isUuid } from '../enqueue/uuid-v7.ts';
import { EVENT_HEADERS } from '../kafka-port/event-record.ts';
import { decodeHeaders, decodeUtf8 } from './event-headers.ts';
import type { EventValidator, ReceivedEvent } from './received-event.ts';

export type ParseResult =
  | {
      readonly ok: true;
      readonly event: ReceivedEvent;
      /**
       * The value's own JSON text, as received: what a receiver stores. Serialising `payload`
       * again can throw on a value JSON.parse took (nested a few thousand levels deep).
       */
      readonly payloadJson: string;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Turns a Kafka message into an event, or into the reason it cannot be one (then it is
 * parked). Never throws: garbage on a topic must not crash or block a consumer.
 */
export function parseMessage(
  topic: string,
  partition: number,
  message: ConsumedMessage,
  validate?: EventValidator,
): ParseResult {
  const decoded = decodeHeaders(message.headers);
  if ('reason' in decoded) return { ok: false, reason: decoded.reason };
  const { headers } = decoded;
  const eventId = headers[EVENT_HEADERS.eventId];
  if (eventId === undefined) return { ok: false, reason: 'missing header event_id' };
  if (!isUuid(eventId))
    return { ok: false, reason: `header event_id is not a UUID: ${eventId.slice(0, 80)}` };
  const eventType = headers[EVENT_HEADERS.eventType];
  if (!eventType) return { ok: false, reason: 'missing header event_type' };
  if (message.value === null) return { ok: false, reason: 'empty message value (tombstone)' };
  const text = decodeUtf8(message.value);
  if (text === undefined) return { ok: false, reason: 'value is not valid UTF-8' };
  const key = message.key === null ? undefined : decodeUtf8(message.key);
  if (message.key !== null && key === undefined) {
    return { ok: false, reason: 'message key is not valid UTF-8' };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      reason: `value is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const occurred = firstValidDate(
    headers[EVENT_HEADERS.occurredAt],
    Number(message.timestamp),
    Date.now(),
  );
  const event: ReceivedEvent = {
    eventId: eventId.toLowerCase(),
    eventType,
    aggregateType: headers[EVENT_HEADERS.aggregateType] ?? '',
    aggregateId: headers[EVENT_HEADERS.aggregateId] ?? '',
    // Keyless messages keep their partition's order under one synthetic key.
    partitionKey: key ?? `${topic}/${partition}`,
    payload,
    occurredAt: occurred,
    topic,
    partition,
    offset: message.offset,
    headers,
  };
  const refused = validate === undefined ? undefined : validationFailure(validate, event);
  if (refused !== undefined) return { ok: false, reason: refused };
  return { ok: true, event, payloadJson: text };
}

/** Why the validator refuses the event, undefined when it accepts it; a throw is a refusal. */
function validationFailure(validate: EventValidator, event: ReceivedEvent): string | undefined {
  try {
    return validate(event);
  } catch (error) {
    return `validator threw: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function firstValidDate(...candidates: readonly (string | number | undefined)[]): Date {
  for (const candidate of candidates) {
    if (candidate === undefined) continue;
    const date = new Date(candidate);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return new Date();
}
