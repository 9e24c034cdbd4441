import type { Kafka } from 'kafkajs';
import type { KafkaClient } from '../kafka-client.ts';
import { createKafkajsAdmin } from './kafkajs-admin.ts';
import { countRequests } from './request-counting.ts';
import { startKafkajsConsumer } from './kafkajs-consumer.ts';
import { createKafkajsProducer } from './kafkajs-producer.ts';

export interface KafkajsClientOptions {
  /**
   * Called once per request any producer, consumer or admin of this client sent and had
   * answered (kafkajs's REQUEST instrumentation event), with the request's API name (`Produce`,
   * `Fetch`, `OffsetCommit`...): what a process costs the brokers, for a metric.
   */
  readonly onRequest?: ((apiName: string) => void) | undefined;
}

/** The port on kafkajs (the default client): every producer, consumer and admin of `kafka`. */
export function kafkajsClient(kafka: Kafka, options: KafkajsClientOptions = {}): KafkaClient {
  const counted = countRequests(options.onRequest);
  return {
    name: 'kafkajs',
    createProducer: (producerOptions) => createKafkajsProducer(kafka, producerOptions, counted),
    startConsumer: (spec) => startKafkajsConsumer(kafka, spec, counted),
    createAdmin: (adminOptions) => createKafkajsAdmin(kafka, adminOptions, counted),
  };
}
