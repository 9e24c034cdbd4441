import { pollUntil, Stack } from '@outbox-inbox/infra';
import { Kafka, logLevel } from 'kafkajs';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The stack whose PostgreSQL and Kafka the scenarios on shared servers use. */
    sharedServersStack: string | undefined;
  }
}

/**
 * The shared servers' stack of this test run, when its global set-up started one: undefined
 * for a caller outside the e2e suite's own vitest config, whose scenarios then get servers of
 * their own.
 */
export function sharedServers(): Stack | undefined {
  const name = inject('sharedServersStack');
  return name === undefined ? undefined : Stack.open(name);
}

let databasesMade = 0;

/**
 * A database name of its own for one scenario on the shared PostgreSQL (`orders_e2e_4711_3`):
 * made of the process id and a counter, never drawn at random, so two can never meet.
 */
export function sharedDatabaseName(database: string): string {
  databasesMade += 1;
  return `${database}_e2e_${process.pid}_${databasesMade}`;
}

/**
 * A stack for one scenario on the shared servers: its role processes are its own, PostgreSQL
 * and Kafka are external to it, so it can kill, freeze and restart its roles but refuses to
 * touch a server (`stack.kill('kafka')` throws), and `down` leaves the servers running.
 */
export async function stackOnSharedServers(name: string, shared: Stack): Promise<Stack> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STACK_PROVIDER: 'external',
    STACK_POSTGRES_URL: shared.postgresUrl(),
    KAFKA_BROKERS: shared.kafkaBrokers.join(','),
  };
  // The external provider reads DATABASE_URL before STACK_POSTGRES_URL.
  delete env['DATABASE_URL'];
  return Stack.up({ name, servers: ['postgres', 'kafka'], env });
}

/**
 * Leaves the shared Kafka as the next scenario must find it, with no topic and no consumer
 * group: every service provisions its topics again as it migrates, and the invariants read
 * each topic whole. Called once the scenario's roles have stopped.
 */
export async function emptySharedKafka(brokers: readonly string[]): Promise<void> {
  const kafka = new Kafka({
    clientId: 'e2e-cleanup',
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const userTopics = async () => (await admin.listTopics()).filter((t) => !t.startsWith('__'));
    const topics = await userTopics();
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    await pollUntil(async () => (await userTopics()).length === 0, {
      timeoutMs: 30_000,
      description: `the shared Kafka to forget the topics ${topics.join(', ')}`,
    });
    // A group whose last member has just left can still be settling: ask again until it goes.
    await pollUntil(
      async () => {
        const { groups } = await admin.listGroups();
        if (groups.length === 0) return true;
        await admin.deleteGroups(groups.map((group) => group.groupId));
        return false;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        description: 'the shared Kafka to delete its consumer groups',
      },
    );
  } finally {
    await admin.disconnect();
  }
}
