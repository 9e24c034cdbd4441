import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { Kysely, PostgresDialect } from 'kysely';
import {
  createPgPool,
  enqueueMany,
  type OutboxEventInput,
  type OutboxTables,
} from '../../src/index.ts';
import type { EventProducer } from '../../src/kafka-port.ts';
import { DEFAULT_RELAY_OPTIONS } from '../../src/relay/relay-options.ts';
import { publishBatch } from '../../src/relay/publish-batch.ts';
import {
  createKafka,
  createTopic,
  kafkaClient,
  recordingLogger,
  useTestDb,
} from '../support/harness.ts';

/*
 * What one relay batch costs in round trips to PostgreSQL: the relay pays them per batch, and
 * at ordinary rates a batch holds one or two rows. Counted from the statements the relay's
 * Kysely sends (each is one round trip: node-postgres does not pipeline).
 */

const testDb = useTestDb('batch_round_trips');
let kafka: Kafka;
let topic: string;
let producer: EventProducer;
/** The same database through a Kysely that remembers every statement it sends. */
let traced: Kysely<OutboxTables>;
const sent: string[] = [];

beforeAll(async () => {
  kafka = createKafka();
  topic = await createTopic(kafka, 'round_trips', 1);
  producer = kafkaClient(kafka).createProducer({ allowAutoTopicCreation: true });
  await producer.connect();
  traced = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({
      pool: createPgPool({ connectionString: testDb.url, max: 2 }, recordingLogger()),
    }),
    log: (event) => void (event.level === 'query' && sent.push(event.query.sql)),
  });
});
afterAll(async () => {
  await producer.disconnect();
  await traced.destroy();
});

const event = (partitionKey: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: partitionKey,
  topic,
  partitionKey,
  payload: { n },
});

/** One relay batch through the traced Kysely: its rows published, its statements. */
async function oneBatch(): Promise<{ published: number; statements: string[] }> {
  sent.length = 0;
  const result = await publishBatch({ db: traced, producer, options: DEFAULT_RELAY_OPTIONS });
  return { published: result.published, statements: [...sent] };
}

it('a batch of rows with no followers costs four round trips: BEGIN with its settings, the claim, the mark, COMMIT', async () => {
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, [event('a', 1), event('b', 1)]));
  const batch = await oneBatch();
  expect(batch.published).toBe(2);
  expect(batch.statements).toHaveLength(4);
  expect(batch.statements[0]).toMatch(/^BEGIN; SELECT\s+set_config/);
});

it('an empty claim costs three', async () => {
  const batch = await oneBatch();
  expect(batch.published).toBe(0);
  expect(batch.statements).toHaveLength(3);
});

it('a head with a later row of its key still takes its followers with it', async () => {
  await testDb.db
    .transaction()
    .execute((trx) => enqueueMany(trx, [event('c', 1), event('c', 2), event('d', 1)]));
  const batch = await oneBatch();
  expect(batch.published).toBe(3);
  expect(batch.statements).toHaveLength(5);
});
