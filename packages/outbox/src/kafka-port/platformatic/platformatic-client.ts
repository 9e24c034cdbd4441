import type { KafkaClient } from '../kafka-client.ts';
import { createPlatformaticAdmin } from './platformatic-admin.ts';
import { startPlatformaticConsumer } from './platformatic-consumer.ts';
import { createPlatformaticProducer } from './platformatic-producer.ts';

/** Where and as whom the adapter's clients connect; each producer, consumer and admin has its own. */
export interface PlatformaticConnection {
  readonly clientId: string;
  /** host:port of the bootstrap brokers. */
  readonly brokers: readonly string[];
  /** Per-request timeout, in ms (the client's default when left out). */
  readonly timeoutMs?: number | undefined;
}

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
