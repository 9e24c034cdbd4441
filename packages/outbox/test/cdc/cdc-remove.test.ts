import { randomUUID } from 'node:crypto';
import { pollUntil } from '@outbox-inbox/infra';
import type { Kafka } from 'kafkajs';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runOutboxCli } from '../../src/cli/outbox.ts';
import { replicationName } from '../../src/cdc/cdc-connector-config.ts';
import { ConnectApi, registerCdcRelay, removeCdcRelay, type CdcRelayDeps } from '../../src/cdc.ts';
import { enqueue, silentLogger, type OutboxTables } from '../../src/index.ts';
import {
  kafkaClient,
  collectTopic,
  createKafka,
  createTopic,
  stack,
  useTestDb,
} from '../support/harness.ts';

const testDb = useTestDb('cdc_remove');
let kafka: Kafka;
let topic: string;
let deps: CdcRelayDeps<OutboxTables>;

beforeAll(async () => {
  await stack().addServer('connect');
  kafka = createKafka('cdc-remove');
  topic = await createTopic(kafka, 'cdc-remove', 1);
  deps = {
    db: testDb.db,
    kafka: kafkaClient(kafka),
    connectUrl: stack().connectUrl,
    connector: { name: `remove-${randomUUID()}`, databaseUrl: testDb.url },
    logger: silentLogger,
  };
}, 240_000);

afterAll(async () => {
  if (deps) await removeCdcRelay(deps);
}, 60_000);

async function enqueueOne(n: number): Promise<string> {
  const { eventId } = await testDb.db.transaction().execute((trx) =>
    enqueue(trx, {
      eventType: 'Step',
      aggregateType: 'order',
      aggregateId: 'k',
      topic,
      partitionKey: 'k',
      payload: { n },
    }),
  );
  return eventId;
}

/** `outbox <argv>` in this process, against the test database and the stack's Kafka Connect. */
async function cli(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOutboxCli(argv, env, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function leftovers(): Promise<{ slots: number; publications: number }> {
  const name = replicationName(deps.connector.name);
  const { rows } = await sql<{ slots: number; publications: number }>`
    SELECT (SELECT count(*)::int FROM pg_replication_slots WHERE slot_name = ${name}) AS slots,
           (SELECT count(*)::int FROM pg_publication WHERE pubname = ${name}) AS publications
  `.execute(testDb.db);
  return rows[0] ?? { slots: -1, publications: -1 };
}

it('`outbox cdc remove` needs --yes and CONNECT_URL', async () => {
  const env = { DATABASE_URL: testDb.url, CONNECT_URL: deps.connectUrl };
  const withoutYes = await cli(['cdc', 'remove', '--connector', deps.connector.name], env);
  expect(withoutYes.code).toBe(2);
  expect(withoutYes.err).toContain('add --yes');
  const withoutUrl = await cli(['cdc', 'remove', '--connector', deps.connector.name, '--yes'], {
    DATABASE_URL: testDb.url,
  });
  expect(withoutUrl.code).toBe(2);
  expect(withoutUrl.err).toContain('CONNECT_URL is not set');
});

it('`outbox cdc remove` leaves no connector, offsets, slot or publication; registered again under its name, the connector snapshots the rows not marked published and streams on', async () => {
  const collected = await collectTopic(kafka, topic);
  const api = new ConnectApi(deps.connectUrl);
  const seen = (eventId: string) => collected.messages.filter((m) => m.eventId === eventId).length;
  try {
    await registerCdcRelay(deps);
    const before = await enqueueOne(1);
    await pollUntil(() => seen(before) === 1 || undefined, {
      timeoutMs: 30_000,
      description: 'the first event on the topic',
    });

    const removed = await cli(['cdc', 'remove', '--connector', deps.connector.name, '--yes'], {
      DATABASE_URL: testDb.url,
      CONNECT_URL: deps.connectUrl,
    });
    expect(removed.err).toBe('');
    expect(removed.code).toBe(0);
    expect(removed.out).toContain(`removed connector ${deps.connector.name}, its offsets`);
    // Connect answers for a deleted connector a moment longer.
    await pollUntil(async () => (await api.status(deps.connector.name)) === undefined, {
      timeoutMs: 30_000,
      description: 'the connector gone',
    });
    expect(await leftovers()).toEqual({ slots: 0, publications: 0 });

    // Connect kept the old offsets, the new connector would resume from a position no slot
    // holds, and its task would fail: registerCdcRelay throws on a failed task.
    const whileRemoved = await enqueueOne(2);
    await registerCdcRelay(deps);
    const after = await enqueueOne(3);
    await pollUntil(() => (seen(whileRemoved) === 1 && seen(after) === 1) || undefined, {
      timeoutMs: 60_000,
      description: 'the events written while removed and after',
    });
    // Nothing marks a row published in CDC mode: the snapshot sends the first one again.
    expect(seen(before)).toBe(2);
  } finally {
    await collected.stop();
  }
}, 180_000);
