import { Kafka, logLevel } from 'kafkajs';
import { Kysely, PostgresDialect } from 'kysely';
import {
  createPgPool,
  startDedupConsumer,
  startRelay,
  type KafkaClient,
  type Logger,
} from '@outbox-inbox/outbox';
import { kafkajsClient } from '@outbox-inbox/outbox/kafkajs';
import { migrate, signUp, signupTopic, welcome, type Db } from './signups.ts';

export interface MinimalConfig {
  readonly databaseUrl: string;
  readonly brokers: readonly string[];
  readonly logger: Logger;
}

export interface Minimal {
  readonly db: Kysely<Db>;
  signUp(email: string): Promise<string>;
  stop(): Promise<void>;
}

async function createTopic(kafka: KafkaClient): Promise<void> {
  const admin = kafka.createAdmin();
  await admin.connect();
  try {
    await admin.createTopics([{ topic: signupTopic, partitions: 3 }]);
  } finally {
    await admin.disconnect();
  }
}

/**
 * The whole service in one process: the write, the relay that publishes what it enqueued, and
 * a consumer that applies each event once. In production each would be a process of its own.
 */
export async function startMinimal(config: MinimalConfig): Promise<Minimal> {
  const { databaseUrl, logger } = config;
  const pool = createPgPool({ connectionString: databaseUrl, max: 8 }, logger);
  const db = new Kysely<Db>({ dialect: new PostgresDialect({ pool }) });
  await migrate(db);
  // The library logs what matters through `logger`; kafkajs' own log would repeat it, and
  // calls a topic that already exists an error.
  const kafka = kafkajsClient(
    new Kafka({ clientId: 'minimal', brokers: [...config.brokers], logLevel: logLevel.NOTHING }),
  );
  await createTopic(kafka);
  // LISTEN on a connection of its own wakes the relay at each commit; it polls besides.
  const relay = await startRelay({ db, kafka, logger, listen: { connectionString: databaseUrl } });
  const welcomer = await startDedupConsumer({
    db,
    kafka,
    logger,
    options: { groupId: 'minimal-welcome', topics: [signupTopic], consumerName: 'welcome' },
    handle: (trx, event) => welcome(trx, event.aggregateId),
  });
  return {
    db,
    signUp: (email) => signUp(db, email),
    async stop() {
      await welcomer.stop();
      await relay.stop();
      await db.destroy();
    },
  };
}
