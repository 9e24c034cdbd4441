import type { Kafka } from 'kafkajs';
import type { KafkaClient } from '../kafka-client.ts';
import { createKafkajsAdmin } from './kafkajs-admin.ts';
import { startKafkajsConsumer } from './kafkajs-consumer.ts';
import { createKafkajsProducer } from './kafkajs-producer.ts';

/** The port on kafkajs (the default client): every producer, consumer and admin of `kafka`. */
export function kafkajsClient(kafka: Kafka): KafkaClient {
  return {
    name: 'kafkajs',
    createProducer: (options) => createKafkajsProducer(kafka, options),
    startConsumer: (spec) => startKafkajsConsumer(kafka, spec),
    createAdmin: (options) => createKafkajsAdmin(kafka, options),
  };
}
