/**
 * `@outbox-inbox/outbox/kafkajs`: the Kafka port on kafkajs, the default client. An entry point
 * of its own, so a process on the other client never loads this one.
 */
export { kafkajsClient } from './kafka-port/kafkajs/kafkajs-client.ts';
