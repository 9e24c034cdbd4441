import type { Logger } from 'pino';
import { createEnvReader } from '../../config/env-reader.ts';
import { createKafka, kafkaClientNames } from '../kafka.ts';
import { provisionTopics, type ProvisionResult } from './provision-topics.ts';
import type { TopicSpec } from './topic-spec.ts';

/**
 * The Kafka half of a service's migrate step: provisions the topics it publishes to on
 * KAFKA_BROKERS (KAFKA_REPLICATION_FACTOR overrides the cluster-sized default). Without
 * KAFKA_BROKERS it says so and provisions nothing, so a database-only migrate still works.
 */
export async function provisionServiceTopics(options: {
  readonly env: NodeJS.ProcessEnv;
  readonly service: string;
  readonly topics: readonly TopicSpec[];
  readonly logger: Logger;
}): Promise<ProvisionResult | undefined> {
  const read = createEnvReader(options.env);
  const brokers = read.list('KAFKA_BROKERS', []);
  if (brokers.length === 0) {
    options.logger.warn('KAFKA_BROKERS is not set: Kafka topics not provisioned');
    return undefined;
  }
  const replicationFactor = read.optionalInteger('KAFKA_REPLICATION_FACTOR', { min: 1, max: 10 });
  const kafka = await createKafka({
    clientId: `${options.service}-migrate`,
    brokers,
    logger: options.logger,
    client: read.oneOf('KAFKA_CLIENT', kafkaClientNames, 'kafkajs'),
  });
  const admin = kafka.createAdmin();
  await admin.connect();
  try {
    return await provisionTopics(admin, options.topics, {
      logger: options.logger,
      replicationFactor,
    });
  } finally {
    await admin.disconnect();
  }
}
