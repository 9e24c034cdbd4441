import {
  eventSchemas,
  orderEventTypes,
  paymentEventTypes,
  schemaVersion,
  type EventType,
} from './events.ts';
import { topicDeclarations, topics, type Topic, type TopicDeclaration } from './topics.ts';

/** The event types each topic carries. */
export const topicEventTypes: Readonly<Record<Topic, readonly EventType[]>> = Object.freeze({
  [topics.orderEvents]: orderEventTypes,
  [topics.paymentEvents]: paymentEventTypes,
});

const allEventTypes: readonly EventType[] = [...orderEventTypes, ...paymentEventTypes];

/** Which service consumes each topic (its producer is the declaration's owner). */
const consumers: Readonly<Record<Topic, string>> = Object.freeze({
  [topics.orderEvents]: 'payment-service',
  [topics.paymentEvents]: 'order-service',
});

/**
 * The Kafka headers every event carries, as the outbox relay writes them: the event's identity
 * (what inboxes deduplicate on) and, when the write had one, its W3C trace context.
 */
export const eventHeaders = Object.freeze({
  type: 'object',
  required: ['event_id', 'event_type', 'aggregate_type', 'aggregate_id', 'occurred_at'],
  properties: {
    event_id: { type: 'string', format: 'uuid', description: 'Unique per event: the dedup key' },
    event_type: { type: 'string', enum: Object.keys(eventSchemas) },
    aggregate_type: { type: 'string' },
    aggregate_id: { type: 'string', description: 'The order or payment id' },
    occurred_at: {
      type: 'string',
      format: 'date-time',
      description: 'When the outbox row was written',
    },
    traceparent: {
      type: 'string',
      description: 'W3C Trace Context of the write that produced the event',
    },
    tracestate: { type: 'string', description: 'W3C Trace Context vendor data' },
  },
});

/** A channel's id in the document: `order.events` → `orderEvents`. */
function channelId(topic: string): string {
  return topic.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());
}

const ref = (path: string) => ({ $ref: `#/${path}` });

function channel(topic: TopicDeclaration) {
  const types = topicEventTypes[topic.name];
  return {
    address: topic.name,
    description: `Published by ${topic.owner}'s outbox relay, consumed by ${consumers[topic.name]}. Keyed by order id: one order's events are on one partition, in order.`,
    messages: Object.fromEntries(types.map((type) => [type, ref(`components/messages/${type}`)])),
    bindings: {
      kafka: {
        bindingVersion: '0.5.0',
        topic: topic.name,
        partitions: topic.partitions,
        replicas: topic.replicationFactor,
        topicConfiguration: {
          'cleanup.policy': [topic.configs['cleanup.policy']],
          'retention.ms': Number(topic.configs['retention.ms']),
        },
      },
    },
  };
}

function operations(topic: TopicDeclaration) {
  const id = channelId(topic.name);
  const messages = topicEventTypes[topic.name].map((type) =>
    ref(`channels/${id}/messages/${type}`),
  );
  return {
    [`send${id[0]?.toUpperCase()}${id.slice(1)}`]: {
      action: 'send',
      channel: ref(`channels/${id}`),
      summary: `${topic.owner} publishes what its transactions wrote to the outbox (at least once).`,
      messages,
    },
    [`receive${id[0]?.toUpperCase()}${id.slice(1)}`]: {
      action: 'receive',
      channel: ref(`channels/${id}`),
      summary: `${consumers[topic.name]} applies each event once, whatever the redeliveries.`,
      messages,
    },
  };
}

function message(type: EventType) {
  // The schema's own `$id` names it in the validator; in the document the message names it.
  const payload: Record<string, unknown> = { ...eventSchemas[type] };
  delete payload['$id'];
  return {
    name: type,
    contentType: 'application/json',
    headers: eventHeaders,
    payload,
    bindings: {
      kafka: {
        bindingVersion: '0.5.0',
        key: { type: 'string', format: 'uuid', description: 'The order id' },
      },
    },
  };
}

/** The AsyncAPI 3.0 document of the system's topics and events, built from the contracts. */
export function asyncApiDocument() {
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'outbox-inbox events',
      version: String(schemaVersion),
      description:
        'The events order-service and payment-service exchange through Kafka, published from transactional outboxes and received through an inbox (payment-service) or processed_event (order-service). Generated from packages/contracts.',
    },
    defaultContentType: 'application/json',
    channels: Object.fromEntries(topicDeclarations.map((t) => [channelId(t.name), channel(t)])),
    operations: Object.fromEntries(topicDeclarations.flatMap((t) => Object.entries(operations(t)))),
    components: {
      messages: Object.fromEntries(allEventTypes.map((type) => [type, message(type)])),
    },
  };
}
