/**
 * `@outbox-inbox/outbox/kafka-port`: the port's types, for a third adapter or a tool that
 * produces, consumes or administers through a `KafkaClient`, the record an outbox row
 * becomes on the wire and the names of the headers it carries.
 */
export type {
  KafkaClient,
  ProducerOptions,
  EventProducer,
  OutgoingRecord,
  OutgoingHeaders,
  RecordOutcome,
  SendReport,
  SendOptions,
  ConsumerSpec,
  ConsumedBatch,
  ConsumedMessage,
  MessageHeaders,
  BatchControl,
  KafkaAdmin,
  AdminOptions,
  NewTopic,
  PartitionEnds,
  CommittedOffset,
  TopicDescription,
} from './kafka-port/kafka-client.ts';
export {
  EVENT_HEADERS,
  toEventRecord,
  type EventMessageFields,
  type EventRecord,
} from './kafka-port/event-record.ts';
