import type {
  Consumer,
  Message,
  MessagesStream,
  MessageToProduce,
  Producer,
} from '@platformatic/kafka';

// The client's types with keys, values and header names and values all as bytes: the adapter
// hands the port what Kafka holds, and decodes nothing itself.
export type RawConsumer = Consumer<Buffer, Buffer, Buffer, Buffer>;
export type RawMessage = Message<Buffer, Buffer, Buffer, Buffer>;
export type RawStream = MessagesStream<Buffer, Buffer, Buffer, Buffer>;
export type RawProducer = Producer<Buffer, Buffer, Buffer, Buffer>;
export type Outbound = MessageToProduce<Buffer, Buffer, Buffer, Buffer>;
