import { Kysely, PostgresDialect } from 'kysely';
import { silentLogger } from '../logger.ts';
import type { EventProducer, KafkaClient } from '../kafka-port/kafka-client.ts';
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
 * The client the services run on (`KAFKA_CLIENT`), so a requeued message takes the path a
 * relay's would; each is loaded only when asked for (both are optional peer dependencies).
 */
async function kafkaClient(name: string, brokers: readonly string[]): Promise<KafkaClient> {
  const clientId = 'outbox-cli';
  if (name === 'kafkajs') {
    const { Kafka, logLevel } = await import('kafkajs');
    const { kafkajsClient } = await import('../kafkajs.ts');
    return kafkajsClient(
      new Kafka({ clientId, brokers: [...brokers], logLevel: logLevel.NOTHING }),
    );
  }
  if (name === 'platformatic') {
    const { platformaticClient } = await import('../platformatic.ts');
    return platformaticClient({ clientId, brokers });
  }
  throw new UsageError(`KAFKA_CLIENT must be kafkajs or platformatic, not "${name}"`);
}

/**
 * The context of one CLI run: DATABASE_URL, KAFKA_BROKERS (with KAFKA_CLIENT) and CONNECT_URL are read when a command first
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
        const client = await kafkaClient(env['KAFKA_CLIENT']?.trim() || 'kafkajs', brokers);
        // The relay's own settings: a requeued message goes where the relay would send it.
        const created = client.createProducer({ allowAutoTopicCreation: false });
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
