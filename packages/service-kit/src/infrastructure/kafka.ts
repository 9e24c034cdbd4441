import { kafkajsClient, type KafkaClient } from '@outbox-inbox/outbox';
import { Kafka, logLevel } from 'kafkajs';
import type { Logger } from 'pino';
import { quietKafkaLog } from './kafka-log.ts';

/**
 * The one place a service builds its Kafka client (R-DIST-OBX-X1: producers exist only in
 * relay / infrastructure modules). kafkajs logs go to the service's pino logger, an outage's
 * retries collapsed into one line when it starts and one when it ends (kafka-log.ts).
 */
export function createKafka(options: {
  clientId: string;
  brokers: readonly string[];
  logger: Logger;
}): KafkaClient {
  const { logCreator, socketFactory } = quietKafkaLog(options.logger);
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    logLevel: logLevel.WARN,
    logCreator,
    socketFactory,
  });
  return kafkajsClient(kafka);
}
