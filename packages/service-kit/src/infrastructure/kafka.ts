import type { KafkaClient } from '@outbox-inbox/outbox';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { Kafka, logLevel } from 'kafkajs';
import type { Logger } from 'pino';
import { quietKafkaLog } from './kafka-log.ts';

/** The client libraries the port runs on: `KAFKA_CLIENT` picks one, kafkajs by default. */
export const kafkaClientNames = Object.freeze(['kafkajs', 'platformatic'] as const);
export type KafkaClientName = (typeof kafkaClientNames)[number];

/**
 * The one place a service builds its Kafka client (R-DIST-OBX-X1: producers exist only in
 * relay / infrastructure modules). Both adapters give the library the same port, with the same
 * partitions for the same keys. kafkajs logs go to the service's pino logger, an outage's
 * retries collapsed into one line when it starts and one when it ends (kafka-log.ts).
 * The second client is imported only by the processes that run on it.
 */
export async function createKafka(options: {
  clientId: string;
  brokers: readonly string[];
  logger: Logger;
  client?: KafkaClientName;
  /** Called per request the kafkajs client sent, with its API name (not on platformatic). */
  onRequest?: (apiName: string) => void;
}): Promise<KafkaClient> {
  if (options.client === 'platformatic') {
    const { platformaticClient } = await import('@outbox-inbox/outbox/platformatic');
    return platformaticClient({ clientId: options.clientId, brokers: options.brokers });
  }
  const { logCreator, socketFactory } = quietKafkaLog(options.logger);
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    logLevel: logLevel.WARN,
    logCreator,
    socketFactory,
  });
  return kafkajsClient(kafka, { onRequest: options.onRequest });
}
