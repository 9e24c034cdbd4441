import { randomUUID } from 'node:crypto';
import { Stack, statementCountingPool, type SentStatement } from '@outbox-inbox/infra';
import {
  Kafka,
  logLevel,
  Partitioners,
  type Consumer,
  type KafkaMessage,
  type Message,
} from 'kafkajs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, inject } from 'vitest';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import {
  createPgPool,
  migrateOutbox,
  type KafkaClient,
  type Logger,
  type OutboxTables,
} from '../../src/index.ts';
import { kafkajsClient } from '../../src/kafkajs.ts';

// The second client's adapter, loaded only by a run on it (KAFKA_CLIENT=platformatic).
const platformatic =
  process.env['KAFKA_CLIENT'] === 'platformatic'
    ? await import('../../src/platformatic.ts')
    : undefined;

export const stack = (): Stack => Stack.open(inject('stackName'));

/** A log that keeps every line, so tests can assert what (and how much) a worker logged. */
export function recordingLogger(): Logger & {
  lines: { level: string; msg: string; obj: object }[];
} {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg = ''): void => {
      lines.push({ level, msg, obj });
      if (process.env['OUTBOX_TEST_LOG']) console.log(new Date().toISOString(), level, msg);
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A test database with the library's schema: its URL and a Kysely on it. */
export interface TestDb {
  readonly url: string;
  readonly db: Kysely<OutboxTables>;
}

/** A test database that its creator destroys. */
export interface OwnedTestDb extends TestDb {
  destroy(): Promise<void>;
}

/**
 * The usual set-up of a test file: a fresh database, created before its first test and
 * destroyed after its last. Call it above the file's own `beforeAll`/`afterAll`: vitest runs
 * `beforeAll` hooks in order and `afterAll` hooks in reverse, so those hooks find the database
 * there. Reading `url` or `db` before it exists (at module level, say) throws.
 */
export function useTestDb(prefix: string): TestDb {
  let created: OwnedTestDb | undefined;
  beforeAll(async () => {
    created = await createTestDb(prefix);
  });
  afterAll(async () => {
    await created?.destroy();
  });
  const current = (): TestDb => {
    if (created === undefined) throw new Error(`test database ${prefix} read before its beforeAll`);
    return created;
  };
  return {
    get url() {
      return current().url;
    },
    get db() {
      return current().db;
    },
  };
}

/** A fresh database with the library's schema, for a test that decides when it goes. */
export async function createTestDb(
  prefix: string,
  logger: Logger = recordingLogger(),
): Promise<OwnedTestDb> {
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  const url = await stack().createDatabase(name);
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool: createPgPool({ connectionString: url, max: 8 }, logger) }),
  });
  await migrateOutbox(db);
  return { url, db, destroy: () => db.destroy() };
}

export function createKafka(clientId = 'outbox-test'): Kafka {
  const brokers = stack().kafkaBrokers;
  const kafka = new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  connections.set(kafka, { clientId, brokers });
  return kafka;
}

/** Where each kafkajs client of createKafka connects (kafkajs does not tell). */
const connections = new WeakMap<Kafka, { clientId: string; brokers: readonly string[] }>();

export async function createTopic(kafka: Kafka, prefix: string, partitions = 3): Promise<string> {
  const topic = `${prefix}-${randomUUID().slice(0, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  return topic;
}

export interface Received {
  readonly key: string;
  readonly eventId: string;
  readonly partition: number;
  readonly offset: string;
  readonly value: string;
}

/** Reads a topic from the beginning into `messages` until stopped. */
export async function collectTopic(
  kafka: Kafka,
  topic: string,
): Promise<{ messages: Received[]; stop(): Promise<void> }> {
  const messages: Received[] = [];
  const consumer: Consumer = kafka.consumer({ groupId: `collect-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message, partition }) => {
      messages.push(toReceived(message, partition));
    },
  });
  return { messages, stop: () => consumer.disconnect() };
}

function toReceived(message: KafkaMessage, partition: number): Received {
  return {
    key: message.key?.toString('utf8') ?? '',
    eventId: message.headers?.['event_id']?.toString() ?? '',
    partition,
    offset: message.offset,
    value: message.value?.toString('utf8') ?? '',
  };
}

/**
 * Per key, the order of first appearances on the topic must follow `expected` (the enqueue
 * order); repeats (at-least-once duplicates) are allowed and counted.
 */
export function checkOrder(
  messages: readonly Received[],
  expectedOrder: ReadonlyMap<string, readonly string[]>,
): { duplicates: number; outOfOrder: string[]; missing: number } {
  const seen = new Set<string>();
  const firstByKey = new Map<string, string[]>();
  let duplicates = 0;
  for (const message of messages) {
    if (seen.has(message.eventId)) {
      duplicates += 1;
      continue;
    }
    seen.add(message.eventId);
    const list = firstByKey.get(message.key) ?? [];
    list.push(message.eventId);
    firstByKey.set(message.key, list);
  }
  const outOfOrder: string[] = [];
  let missing = 0;
  for (const [key, expected] of expectedOrder) {
    const actual = firstByKey.get(key) ?? [];
    missing += expected.length - actual.length;
    if (actual.join() !== expected.slice(0, actual.length).join()) outOfOrder.push(key);
  }
  return { duplicates, outOfOrder, missing };
}

/** Sends messages the way a relay would shape them (or deliberately not). */
export async function produce(kafka: Kafka, topic: string, messages: Message[]): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({ topic, messages, acks: -1 });
  } finally {
    await producer.disconnect();
  }
}

/** A well-formed event message, as the relay publishes it. */
export function eventMessage(
  key: string,
  eventType: string,
  payload: unknown,
  eventId: string = randomUUID(),
): Message & { eventId: string } {
  return {
    eventId,
    key,
    value: JSON.stringify(payload),
    headers: {
      event_id: eventId,
      event_type: eventType,
      aggregate_type: 'order',
      aggregate_id: key,
      occurred_at: new Date().toISOString(),
    },
  };
}

/** `SELECT count(*) FROM <from>`, e.g. `count(db, "inbox_event WHERE processed")`. */
export async function count(db: Kysely<OutboxTables>, from: string): Promise<number> {
  const result = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.raw(from)}`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * The test database through a Kysely that records every statement it sends (each one round
 * trip), for tests that count what a worker costs. `destroy()` it when done.
 */
export function statementCountingDb<DB extends OutboxTables = OutboxTables>(
  testDb: TestDb,
): { readonly db: Kysely<DB>; readonly sent: SentStatement[] } {
  const { pool, sent } = statementCountingPool(testDb.url);
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), sent };
}

export interface InboxSeed {
  readonly key: string;
  readonly eventType: string;
  readonly payload?: unknown;
}

/** Inserts inbox rows directly (as the writer would), in array order; returns their event ids. */
export async function seedInbox(
  db: Kysely<OutboxTables>,
  seeds: readonly InboxSeed[],
): Promise<string[]> {
  const rows = seeds.map((seed, i) => ({
    event_id: randomUUID(),
    consumer_group: 'test',
    event_type: seed.eventType,
    aggregate_type: 'order',
    aggregate_id: seed.key,
    partition_key: seed.key,
    payload: JSON.stringify(seed.payload ?? {}),
    topic: 'seeded',
    kafka_partition: 0,
    kafka_offset: i,
    occurred_at: new Date(),
  }));
  await db.insertInto('inbox_event').values(rows).execute();
  return rows.map((row) => row.event_id);
}

/**
 * The library's port, on the client KAFKA_CLIENT names: 'kafkajs' (the default: the test's own
 * kafkajs client) or 'platformatic' (@platformatic/kafka on the same brokers). `brokers` is for
 * a kafkajs client not made by createKafka, whose brokers the harness cannot know; `timeoutMs`
 * is the second client's per-request timeout (a kafkajs client carries its own).
 */
export function kafkaClient(
  kafka: Kafka,
  brokers?: readonly string[],
  options: { readonly timeoutMs?: number } = {},
): KafkaClient {
  const chosen = process.env['KAFKA_CLIENT'] ?? 'kafkajs';
  switch (chosen) {
    case 'kafkajs':
      return kafkajsClient(kafka);
    case 'platformatic': {
      if (platformatic === undefined) throw new Error('the platformatic adapter was not loaded');
      const known = connections.get(kafka);
      const where = brokers ?? known?.brokers;
      if (where === undefined) {
        throw new Error(
          'kafkaClient: this kafkajs client was not made by createKafka; pass its brokers',
        );
      }
      return platformatic.platformaticClient({
        clientId: known?.clientId ?? 'outbox-test',
        brokers: where,
        timeoutMs: options.timeoutMs,
      });
    }
    default:
      throw new Error(`KAFKA_CLIENT=${chosen} is not a client: use 'kafkajs' or 'platformatic'`);
  }
}
