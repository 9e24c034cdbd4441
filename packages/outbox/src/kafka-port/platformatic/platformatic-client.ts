import type { KafkaClient } from '../kafka-client.ts';
import { createPlatformaticAdmin } from './platformatic-admin.ts';
import { startPlatformaticConsumer } from './platformatic-consumer.ts';
import type { PlatformaticConnection } from './platformatic-connection.ts';
import { createPlatformaticProducer } from './platformatic-producer.ts';

/** The port on @platformatic/kafka (pure JavaScript, for Node 24). */
export function platformaticClient(options: PlatformaticConnection): KafkaClient {
  const connection: PlatformaticConnection = {
    clientId: options.clientId,
    brokers: [...options.brokers],
    timeoutMs: options.timeoutMs,
  };
  return {
    name: 'platformatic',
    createProducer: (producerOptions) => createPlatformaticProducer(connection, producerOptions),
    startConsumer: (spec) => startPlatformaticConsumer(connection, spec),
    createAdmin: (adminOptions) => createPlatformaticAdmin(connection, adminOptions),
  };
}
