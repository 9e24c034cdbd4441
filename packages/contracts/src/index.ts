export { topics, topicDeclarations, topicsOwnedBy } from './topics.ts';
export type { Topic, TopicDeclaration } from './topics.ts';
export {
  OrderCreated,
  OrderCancelled,
  PaymentCompleted,
  PaymentFailed,
  PaymentRefunded,
  aggregateTypes,
  eventSchemas,
  isEventType,
  orderEventTypes,
  paymentEventTypes,
  schemaVersion,
} from './events.ts';
export type { EventPayloads, EventType } from './events.ts';
export { isEvent, validate } from './validate.ts';
