import { Kafka, logLevel } from 'kafkajs';
import { Kysely, PostgresDialect } from 'kysely';
import { silentLogger } from '../logger.ts';
import type { EventProducer } from '../kafka-port/kafka-client.ts';
import { kafkajsClient } from '../kafka-port/kafkajs/kafkajs-client.ts';
import { createPgPool } from '../pg-pool/create-pg-pool.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { UsageError } from './args.ts';
import type { CliContext } from './command.ts';
import type { CliIo } from './output.ts';

/** A small pool for one command: commands run their statements one after another. */
export function openDatabase(url: string): Kysely<OutboxTables> {
  return new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: url, max: 2 }, silentLogger),
    }),
  });
}

/**
 * The context of one CLI run: DATABASE_URL, KAFKA_BROKERS and CONNECT_URL are read when a command first
 * needs them (a missing one is a usage error naming it); `close()` closes what was opened.
 */
export function createCliContext(
  env: NodeJS.ProcessEnv,
  io: CliIo,
): CliContext & { close(): Promise<void> } {
  let db: Kysely<OutboxTables> | undefined;
  let producer: EventProducer | undefined;
  const required = (name: string): string => {
    const value = env[name]?.trim();
    if (value === undefined || value === '') throw new UsageError(`${name} is not set`);
    return value;
  };
  return {
    io,
    db() {
      db ??= openDatabase(required('DATABASE_URL'));
      return db;
    },
    async producer() {
      if (producer === undefined) {
        const brokers = required('KAFKA_BROKERS')
          .split(',')
          .map((broker) => broker.trim());
        const kafka = new Kafka({ clientId: 'outbox-cli', brokers, logLevel: logLevel.NOTHING });
        // The relay's own settings: a requeued message goes where the relay would send it.
        const created = kafkajsClient(kafka).createProducer({ allowAutoTopicCreation: false });
        await created.connect();
        producer = created;
      }
      return producer;
    },
    connectUrl() {
      return required('CONNECT_URL');
    },
    async close() {
      await producer?.disconnect();
      await db?.destroy();
    },
  };
}
