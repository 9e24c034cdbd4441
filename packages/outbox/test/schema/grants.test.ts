import { randomUUID } from 'node:crypto';
import { pollUntil } from '@outbox-inbox/infra';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { Registry } from 'prom-client';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runOutboxCli } from '../../src/cli/outbox.ts';
import {
  createPgPool,
  enqueue,
  enqueueMany,
  migrateOutbox,
  OutboxError,
  startDedupConsumer,
  startInboxProcessor,
  startInboxWriter,
  startRelay,
  type OutboxEventInput,
  type OutboxTables,
} from '../../src/index.ts';
import {
  createOutboxMetrics,
  discardDeadInboxEvents,
  discardParkedMessages,
  grantOutboxAccess,
  listDeadInboxEvents,
  listFailedOutboxEvents,
  outboxGrantStatements,
  previewRetention,
  readOutboxStatus,
  readParkedMessages,
  replayOutbox,
  requeueDeadInboxEvents,
  requeueParkedMessages,
  retryFailedOutboxEvents,
  runRetention,
  runRetentionExclusively,
  skipFailedOutboxEvents,
} from '../../src/ops.ts';
import { OUTBOX_WORKER_KINDS } from '../../src/schema/grants.ts';
import {
  collectTopic,
  count,
  createKafka,
  createTopic,
  eventMessage,
  kafkaClient,
  produce,
  recordingLogger,
  seedInbox,
  stack,
  useTestDb,
} from '../support/harness.ts';
import { createOrderTable, type OrderDb, type OrderTable } from '../support/order-table.ts';
import { roleUrl, useRoleLogins } from '../support/role-logins.ts';

describe('outboxGrantStatements (pure)', () => {
  it('quotes the role as an identifier, whatever its name', () => {
    expect(outboxGrantStatements('-x', ['writer'])).toContain(
      'GRANT INSERT (event_id, event_type, aggregate_type, aggregate_id, topic, partition_key, payload, headers) ON TABLE outbox_event TO "-x"',
    );
    for (const statement of outboxGrantStatements('Order "Relay"', ['relay'])) {
      expect(statement).toMatch(/ TO "Order ""Relay"""$/);
    }
  });

  it('grants column by column where a worker uses only some columns, once per table and privilege', () => {
    const statements = outboxGrantStatements('r', ['inbox-processor', 'writer'], {
      schema: 'Billing',
    });
    expect(statements[0]).toBe('GRANT USAGE ON SCHEMA "Billing" TO "r"');
    expect(statements).toContain(
      'GRANT UPDATE (processed, processed_at, attempts, next_attempt_at, last_error, dead_at) ON TABLE "Billing".inbox_event TO "r"',
    );
    const privileges = statements.map((statement) => statement.split(' ON ')[0]?.split(' ')[1]);
    const onTables = statements.map((statement) => statement.split(' ON ')[1]);
    // One statement per (table, privilege): the writer's and the gauges' columns are merged.
    expect(new Set(privileges.map((p, i) => `${p} ${onTables[i]}`)).size).toBe(statements.length);
    expect(statements.filter((s) => s.includes('outbox_event'))).toHaveLength(2);
  });

  it('refuses an empty, reserved or overlong role name, and an unknown worker', () => {
    const refused = (role: string, workers: readonly string[] = ['writer']) => {
      const run = () => outboxGrantStatements(role, workers as never);
      expect(run).toThrow(OutboxError);
      try {
        run();
      } catch (error) {
        expect((error as OutboxError).code).toBe('INVALID_OPTIONS');
      }
    };
    refused('');
    refused('public');
    refused('PUBLIC');
    refused('none');
    refused('pg_monitor');
    refused('r'.repeat(64));
    refused('r', ['reaper']);
    refused('r', []);
    expect(outboxGrantStatements('r'.repeat(63), ['writer'])).not.toHaveLength(0);
  });
});

const testDb = useTestDb('grants');
const logins = useRoleLogins(testDb);
const kafka = () => createKafka('outbox-grants');
let orders: Kysely<OrderDb>;
beforeAll(async () => {
  orders = await createOrderTable(testDb);
});
beforeEach(async () => {
  await sql`TRUNCATE outbox_event, inbox_event, processed_event, parked_message, orders`.execute(
    testDb.db,
  );
});

/** Rejects with PostgreSQL's permission error naming `table`. */
const refused = async (query: Promise<unknown>, table: string): Promise<void> => {
  await expect(query).rejects.toThrow(new RegExp(`permission denied for table ${table}\\b`));
};
const run = (db: Kysely<OutboxTables>, statement: string) => sql.raw(statement).execute(db);

const event = (topic: string, key: string, n: number): OutboxEventInput => ({
  eventType: 'Step',
  aggregateType: 'order',
  aggregateId: key,
  topic,
  partitionKey: key,
  payload: { n },
});

it('a fresh login has USAGE on the public schema and not CREATE (PostgreSQL 15); the grants add USAGE on it all the same', async () => {
  const bare = await logins.createRole('grants_bare_');
  const { rows } = await sql<{ usage: boolean; create: boolean; version: number }>`
    SELECT has_schema_privilege(${bare}, 'public', 'USAGE') AS usage,
      has_schema_privilege(${bare}, 'public', 'CREATE') AS create,
      current_setting('server_version_num')::int / 10000 AS version
  `.execute(testDb.db);
  expect(rows[0]).toEqual({ usage: true, create: false, version: 15 });
  // Granted to the role itself, so it holds where PUBLIC lost USAGE on public (a hardening step).
  const writer = await logins.login('grants_schema_', ['writer']);
  const granted = await sql<{ own: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) acl
      WHERE n.nspname = 'public' AND acl.privilege_type = 'USAGE'
        AND acl.grantee = ${writer.role}::regrole
    ) AS own
  `.execute(testDb.db);
  expect(granted.rows[0]?.own).toBe(true);
});

it('tables in a schema of their own: without USAGE on it a role finds none; with the grants a writer enqueues', async () => {
  const inBilling = (url: string) =>
    new Kysely<OutboxTables>({
      dialect: new PostgresDialect({
        pool: createPgPool(
          { connectionString: url, options: '-c search_path=billing', max: 2 },
          recordingLogger(),
        ),
      }),
    });
  // A database of its own: the test database has the tables in public already.
  const url = await stack().createDatabase(`grants_billing_${randomUUID().slice(0, 8)}`);
  const owner = inBilling(url);
  const role = await logins.createRole('grants_billing_');
  const writer = inBilling(roleUrl(url, role));
  try {
    await sql`CREATE SCHEMA billing`.execute(owner);
    await migrateOutbox(owner);
    const write = () =>
      writer.transaction().execute((trx) => enqueue(trx, event('orders', 'b', 1)));
    // The search path passes over a schema the role may not use: the table is not found.
    await expect(write()).rejects.toThrow(/relation "outbox_event" does not exist/);
    await grantOutboxAccess(owner, role, ['writer']);
    await write();
    expect(await count(owner, 'billing.outbox_event')).toBe(1);
  } finally {
    await writer.destroy();
    // The role goes after the file; its grants in this database go now.
    await sql`DROP OWNED BY ${sql.id(role)}`.execute(owner);
    await owner.destroy();
  }
});

it('writer: enqueues as a role whose name needs quoting, and cannot mark rows published', async () => {
  const writer = await logins.login('Order "Relay" -x ', ['writer']);
  const { eventIds } = await writer.db
    .transaction()
    .execute((trx) => enqueueMany(trx, [event('orders', 'o1', 1), event('orders', 'o1', 2)]));
  await writer.db
    .transaction()
    .execute((trx) => enqueue(trx, event('orders', 'o2', 3), { notify: false }));
  expect(await count(testDb.db, 'outbox_event')).toBe(3);
  expect(eventIds).toHaveLength(2);
  await refused(run(writer.db, 'UPDATE outbox_event SET published_at = now()'), 'outbox_event');
  await refused(run(writer.db, 'SELECT payload FROM outbox_event'), 'outbox_event');
});

it('relay: publishes to Kafka and marks the rows, sets an oversized row aside; cannot delete, rewrite payloads or read the inbox', async () => {
  const relayLogin = await logins.login('grants_relay_', ['relay']);
  const client = kafka();
  const topic = await createTopic(client, 'grants-relay', 1);
  const events = [1, 2, 3, 4, 5, 6].map((n) => event(topic, `k${n % 2}`, n));
  const oversized = { ...event(topic, 'big', 7), payload: { text: 'x'.repeat(5000) } };
  await testDb.db.transaction().execute((trx) => enqueueMany(trx, [...events, oversized]));
  const received = await collectTopic(client, topic);
  const relay = await startRelay({
    db: relayLogin.db,
    kafka: kafkaClient(client),
    logger: recordingLogger(),
    metrics: createOutboxMetrics(new Registry(), relayLogin.db),
    listen: { connectionString: relayLogin.url },
    options: { pollIntervalMs: 50, maxEventBytes: 2000 },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'outbox_event WHERE published_at IS NOT NULL')) === 6 &&
        (await count(
          testDb.db,
          "outbox_event WHERE failed_at IS NOT NULL AND last_error LIKE 'EVENT_TOO_LARGE%'",
        )) === 1 &&
        received.messages.length === 6,
      { timeoutMs: 30_000, description: '6 events published and marked, 1 set aside' },
    );
  } finally {
    await relay.stop();
    await received.stop();
  }
  await refused(run(relayLogin.db, 'DELETE FROM outbox_event'), 'outbox_event');
  await refused(run(relayLogin.db, `UPDATE outbox_event SET payload = '{}'`), 'outbox_event');
  await refused(run(relayLogin.db, 'SELECT * FROM inbox_event'), 'inbox_event');
});

it('inbox writer: stores events, counts a repeat, parks a malformed message; cannot mark rows processed', async () => {
  const writerLogin = await logins.login('grants_inbox_writer_', ['inbox-writer']);
  const client = kafka();
  const topic = await createTopic(client, 'grants-inbox', 1);
  const messages = [1, 2, 3].map((n) => eventMessage(`o${n}`, 'OrderCreated', { n }));
  const [first] = messages;
  const malformed = { key: 'o9', value: '{}', headers: { event_type: 'OrderCreated' } };
  await produce(client, topic, [...messages, malformed]);
  if (first !== undefined) await produce(client, topic, [first]);
  const writer = await startInboxWriter({
    db: writerLogin.db,
    kafka: kafkaClient(client),
    logger: recordingLogger(),
    metrics: createOutboxMetrics(new Registry(), writerLogin.db),
    options: { groupId: `grants-${topic}`, topics: [topic] },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'inbox_event')) === 3 &&
        (await count(testDb.db, 'inbox_event WHERE redeliveries = 1')) === 1 &&
        (await count(testDb.db, 'parked_message')) === 1,
      { timeoutMs: 30_000, description: '3 inbox rows, one repeat counted, 1 parked' },
    );
  } finally {
    await writer.stop();
  }
  await refused(run(writerLogin.db, 'UPDATE inbox_event SET processed = true'), 'inbox_event');
  await refused(run(writerLogin.db, 'SELECT * FROM parked_message'), 'parked_message');
});

it('inbox processor (with writer): handles rows whose handlers enqueue, retries and kills a failing one; alone it cannot enqueue', async () => {
  const processorLogin = await logins.login('grants_processor_', ['inbox-processor', 'writer']);
  await seedInbox(testDb.db, [
    { key: 'a', eventType: 'OrderCreated', payload: { n: 1 } },
    { key: 'b', eventType: 'OrderCreated', payload: { n: 2 } },
    { key: 'a', eventType: 'OrderCreated', payload: { n: 3 } },
    { key: 'c', eventType: 'Broken' },
  ]);
  const processor = startInboxProcessor<OutboxTables>({
    db: processorLogin.db,
    logger: recordingLogger(),
    metrics: createOutboxMetrics(new Registry(), processorLogin.db),
    listen: { connectionString: processorLogin.url },
    handlers: {
      OrderCreated: async (trx, received) => {
        await enqueue(trx, { ...event('payments', received.partitionKey, 0), eventType: 'Pay' });
      },
      Broken: async () => {
        throw new Error('this handler always fails');
      },
    },
    options: {
      pollIntervalMs: 50,
      maxAttempts: 2,
      retryBackoff: { initialMs: 20, maxMs: 50, multiplier: 2 },
    },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'inbox_event WHERE processed')) === 3 &&
        (await count(testDb.db, 'inbox_event WHERE dead_at IS NOT NULL AND attempts = 2')) === 1 &&
        (await count(testDb.db, "outbox_event WHERE event_type = 'Pay'")) === 3,
      { timeoutMs: 30_000, description: '3 rows processed, 3 events enqueued, 1 dead' },
    );
  } finally {
    await processor.stop();
  }
  const processorOnly = await logins.login('grants_processor_only_', ['inbox-processor']);
  await refused(
    processorOnly.db.transaction().execute((trx) => enqueue(trx, event('payments', 'a', 1))),
    'outbox_event',
  );
});

it('dedup consumer: applies events once, parks a malformed message; cannot touch inbox_event', async () => {
  const consumerLogin = await logins.login('grants_dedup_', ['dedup-consumer']);
  // The fork grants its own tables: the effect below updates an order.
  await sql`GRANT SELECT (id, payments), UPDATE (payments) ON orders TO ${sql.id(consumerLogin.role)}`.execute(
    testDb.db,
  );
  await orders
    .insertInto('orders')
    .values([
      { id: 'o1', status: 'new', note: null },
      { id: 'o2', status: 'new', note: null },
    ])
    .execute();
  const client = kafka();
  const topic = await createTopic(client, 'grants-dedup', 1);
  const paid = ['o1', 'o2'].map((id) => eventMessage(id, 'PaymentSucceeded', { orderId: id }));
  const malformed = { key: 'o3', value: 'not json', headers: { event_id: randomUUID() } };
  await produce(client, topic, [...paid, malformed, ...paid.slice(0, 1)]);
  const consumer = await startDedupConsumer<OrderDb>({
    db: consumerLogin.db.withTables<{ orders: OrderTable }>(),
    kafka: kafkaClient(client),
    logger: recordingLogger(),
    metrics: createOutboxMetrics(new Registry(), consumerLogin.db),
    options: { groupId: `grants-${topic}`, topics: [topic], consumerName: 'order-payments' },
    handle: async (trx, received) => {
      const { orderId } = received.payload as { orderId: string };
      await trx
        .updateTable('orders')
        .set((eb) => ({ payments: eb('payments', '+', 1) }))
        .where('id', '=', orderId)
        .execute();
    },
  });
  try {
    await pollUntil(
      async () =>
        (await count(testDb.db, 'processed_event')) === 2 &&
        (await count(testDb.db, 'processed_event WHERE redeliveries = 1')) === 1 &&
        (await count(testDb.db, 'parked_message')) === 1,
      { timeoutMs: 30_000, description: '2 events applied, 1 repeat counted, 1 parked' },
    );
  } finally {
    await consumer.stop();
  }
  expect(await count(testDb.db, 'orders WHERE payments = 1')).toBe(2);
  const db = consumerLogin.db;
  await refused(run(db, 'SELECT * FROM inbox_event'), 'inbox_event');
  await refused(run(db, 'UPDATE inbox_event SET processed = true'), 'inbox_event');
  await refused(run(db, 'DELETE FROM inbox_event'), 'inbox_event');
  await refused(
    seedInbox(db, [{ key: 'x', eventType: 'OrderCreated' }]).then(() => undefined),
    'inbox_event',
  );
});

/** Outbox, inbox, dedup and parked rows two days old, as retention finds them. */
async function seedOldRows(): Promise<void> {
  await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      [1, 2, 3].map((n) => event('old', `k${n}`, n)),
    ),
  );
  await seedInbox(testDb.db, [
    { key: 'a', eventType: 'Done' },
    { key: 'b', eventType: 'Done' },
    { key: 'c', eventType: 'Waiting' },
  ]);
  await run(
    testDb.db,
    `UPDATE outbox_event SET created_at = now() - interval '2 days',
      published_at = CASE WHEN partition_key <> 'k3' THEN now() - interval '2 days' END`,
  );
  await run(
    testDb.db,
    `UPDATE inbox_event SET processed = event_type = 'Done',
      processed_at = CASE WHEN event_type = 'Done' THEN now() - interval '2 days' END`,
  );
  await run(
    testDb.db,
    `INSERT INTO processed_event (consumer, event_id, processed_at)
      SELECT 'c', gen_random_uuid(), now() - interval '2 days' FROM generate_series(1, 3)`,
  );
  await seedParked(2, "now() - interval '2 days'");
}

async function seedParked(rows: number, parkedAt = 'now()', topic = 'parked'): Promise<void> {
  await run(
    testDb.db,
    `INSERT INTO parked_message (consumer, topic, kafka_partition, kafka_offset, message_value,
        reason, parked_at)
      SELECT 'c', '${topic}', 0, n, 'raw', 'not json', ${parkedAt}
      FROM generate_series(1, ${rows}) AS n`,
  );
}

const oldWindows = {
  olderThan: 86_400_000,
  processedEventsOlderThan: 86_400_000,
  parkedOlderThan: 86_400_000,
  batchSize: 2,
} as const;

it('retention: deletes old rows of the four tables in batches, never unfinished ones; cannot UPDATE their data', async () => {
  const retention = await logins.login('grants_retention_', ['retention']);
  await seedOldRows();
  const preview = await previewRetention(retention.db, oldWindows);
  const underCdc = await previewRetention(retention.db, {
    ...oldWindows,
    outboxPublishedBy: 'cdc',
  });
  expect(underCdc.outboxDeleted).toBe(3);
  const deleted = await runRetention(retention.db, oldWindows);
  expect(deleted.byTable).toEqual({
    outbox_event: 2,
    inbox_event: 2,
    processed_event: 3,
    parked_message: 2,
  });
  expect(preview.byTable).toEqual(deleted.byTable);
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NULL')).toBe(1);
  expect(await count(testDb.db, 'inbox_event WHERE NOT processed')).toBe(1);
  await seedOldRows();
  expect((await runRetentionExclusively(retention.db, oldWindows))?.outboxDeleted).toBe(2);

  const db = retention.db;
  await refused(run(db, 'UPDATE outbox_event SET published_at = NULL'), 'outbox_event');
  await refused(run(db, 'UPDATE inbox_event SET processed = false'), 'inbox_event');
  await refused(run(db, 'UPDATE processed_event SET processed_at = now()'), 'processed_event');
  await refused(run(db, `UPDATE parked_message SET consumer = 'x'`), 'parked_message');
  // The one exception, pinned: the diagnostic text its row locks need (see grants.ts).
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema()
      AND table_name IN ('outbox_event', 'inbox_event', 'processed_event', 'parked_message')
      AND has_column_privilege(${retention.role}, format('%I', table_name), column_name, 'UPDATE')
    ORDER BY table_name, column_name
  `.execute(testDb.db);
  expect(rows.map((row) => `${row.table_name}.${row.column_name}`)).toEqual([
    'inbox_event.last_error',
    'outbox_event.last_error',
    'parked_message.reason',
  ]);
});

it('retention needs an UPDATE on some column: DELETE alone does not let it lock the rows it skips', async () => {
  const retention = await logins.login('grants_retention_bare_', ['retention']);
  await sql`REVOKE UPDATE (reason) ON parked_message FROM ${sql.id(retention.role)}`.execute(
    testDb.db,
  );
  await seedParked(1, "now() - interval '2 days'");
  await refused(
    runRetention(retention.db, { olderThan: 86_400_000, parkedOlderThan: 86_400_000 }),
    'parked_message',
  );
  await run(
    retention.db,
    `DELETE FROM parked_message WHERE ctid = ANY(ARRAY(SELECT ctid FROM parked_message))`,
  );
  expect(await count(testDb.db, 'parked_message')).toBe(0);
});

it('operator: status, failed rows retried and skipped, replay, dead rows requeued and discarded', async () => {
  const db = (await logins.login('grants_operator_', ['operator'])).db;
  const { eventIds } = await testDb.db
    .transaction()
    .execute((trx) => enqueueMany(trx, [event('orders', 'p', 1), event('orders', 'f', 2)]));
  const [publishedId = '', failedId = ''] = eventIds;
  await run(testDb.db, `UPDATE outbox_event SET published_at = now() WHERE partition_key = 'p'`);
  const failRow = () =>
    run(testDb.db, `UPDATE outbox_event SET failed_at = now() WHERE partition_key = 'f'`);
  await failRow();
  const [deadId = ''] = await seedInbox(testDb.db, [{ key: 'd', eventType: 'Broken' }]);
  const killRow = () => run(testDb.db, `UPDATE inbox_event SET dead_at = now(), attempts = 3`);
  await killRow();
  await seedParked(2);

  const status = await readOutboxStatus(db);
  expect(status.map((table) => [table.table, table.stuck])).toEqual([
    ['outbox_event', 1],
    ['inbox_event', 1],
    ['processed_event', 0],
    ['parked_message', 2],
  ]);
  expect((await listFailedOutboxEvents(db)).map((row) => row.eventId)).toEqual([failedId]);
  expect(await retryFailedOutboxEvents(db, [failedId])).toBe(1);
  await failRow();
  expect(await skipFailedOutboxEvents(db, [failedId])).toBe(1);
  expect(await replayOutbox(db, { topic: 'orders' })).toBe(1);
  const replayed = `outbox_event WHERE event_id = '${publishedId}' AND published_at IS NULL`;
  expect(await count(testDb.db, replayed)).toBe(1);

  expect((await listDeadInboxEvents(db)).map((row) => row.eventId)).toEqual([deadId]);
  expect(await requeueDeadInboxEvents(db, [deadId])).toBe(1);
  await killRow();
  expect(await discardDeadInboxEvents(db, [deadId])).toBe(1);
});

it('operator: parked messages read, discarded and requeued to Kafka; the outbox command lists', async () => {
  const operator = await logins.login('grants_operator_parked_', ['operator']);
  const client = kafka();
  const topic = await createTopic(client, 'grants-operator', 1);
  await seedParked(2, 'now()', topic);
  const parked = await readParkedMessages(operator.db);
  expect(parked.map((row) => row.reason)).toEqual(['not json', 'not json']);
  const [requeued, discarded] = parked;
  expect(await discardParkedMessages(operator.db, [discarded?.id ?? ''])).toBe(1);
  const producer = kafkaClient(client).createProducer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const ids = await requeueParkedMessages(operator.db, producer, [requeued?.id ?? '']);
    expect(ids).toEqual([requeued?.id]);
  } finally {
    await producer.disconnect();
  }
  expect(await count(testDb.db, 'parked_message')).toBe(0);

  const lines: string[] = [];
  const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) };
  const env = { DATABASE_URL: operator.url };
  for (const command of [
    ['status', '--json'],
    ['failed', 'list'],
    ['dead', 'list'],
    ['parked', 'list'],
  ]) {
    expect(await runOutboxCli(command, env, io), lines.join('\n')).toBe(0);
  }
});

it('cdc connector: reads what the connector snapshots; cannot write the outbox', async () => {
  const connector = await logins.login('grants_cdc_', ['cdc-connector']);
  await testDb.db
    .transaction()
    .execute((trx) => enqueueMany(trx, [event('orders', 'a', 1), event('orders', 'b', 2)]));
  // cdc-connector-config.ts: the snapshot statement the connector runs as its login.
  const snapshot = await run(
    connector.db,
    'SELECT * FROM public.outbox_event WHERE published_at IS NULL ORDER BY id',
  );
  expect(snapshot.rows).toHaveLength(2);
  await refused(
    run(
      connector.db,
      `INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload,
        topic, partition_key) VALUES (gen_random_uuid(), 'o', 'a', 'T', '{}', 't', 'a')`,
    ),
    'outbox_event',
  );
  await refused(run(connector.db, 'DELETE FROM outbox_event'), 'outbox_event');
});

it('every worker of the library can read the backlog gauges that run in its process', async () => {
  await seedParked(3);
  await seedInbox(testDb.db, [{ key: 'a', eventType: 'Waiting' }]);
  const workers = OUTBOX_WORKER_KINDS.filter((worker) => worker !== 'cdc-connector');
  for (const worker of workers) {
    const login = await logins.login(`grants_gauges_${worker.replace('-', '_')}_`, [worker]);
    const registry = new Registry();
    createOutboxMetrics(registry, login.db);
    // The gauges are one query: a refused one leaves every gauge at 0.
    const parked = await registry.getSingleMetric('parked_messages')?.get();
    const backlog = await registry.getSingleMetric('inbox_backlog_events')?.get();
    expect([worker, parked?.values[0]?.value, backlog?.values[0]?.value]).toEqual([worker, 3, 1]);
  }
});

it('metrics: a process that only serves the gauges cannot read an event or enqueue one', async () => {
  const gauges = await logins.login('grants_metrics_', ['metrics']);
  await refused(run(gauges.db, 'SELECT payload FROM outbox_event'), 'outbox_event');
  await refused(run(gauges.db, 'SELECT payload FROM inbox_event'), 'inbox_event');
  await refused(
    run(
      gauges.db,
      `INSERT INTO outbox_event (event_id, aggregate_type, aggregate_id, event_type, payload,
        topic, partition_key) VALUES (gen_random_uuid(), 'o', 'a', 'T', '{}', 't', 'a')`,
    ),
    'outbox_event',
  );
});
