import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { producerSendsChannel } from '@platformatic/kafka';
import { sql } from 'kysely';
import { beforeEach, expect, it } from 'vitest';
import { runOutboxCli } from '../../src/cli/outbox.ts';
import { enqueueMany } from '../../src/index.ts';
import {
  collectTopic,
  count,
  createKafka,
  createTopic,
  seedInbox,
  stack,
  useTestDb,
} from '../support/harness.ts';
import { pollUntil } from '@outbox-inbox/infra';

const testDb = useTestDb('outbox_cli');
beforeEach(async () => {
  await sql`TRUNCATE outbox_event, inbox_event, processed_event, parked_message`.execute(testDb.db);
});

/** Runs `outbox <argv>` in this process against the test database; what it printed, and its code. */
async function cli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runOutboxCli(
    argv,
    { DATABASE_URL: testDb.url, ...env },
    { out: (line) => out.push(line), err: (line) => err.push(line) },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function enqueue(topic: string, keys: readonly string[]): Promise<string[]> {
  const { eventIds } = await testDb.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      keys.map((key) => ({
        eventType: 'Step',
        aggregateType: 'order',
        aggregateId: key,
        topic,
        partitionKey: key,
        payload: {},
      })),
    ),
  );
  return eventIds;
}

async function failRows(eventIds: readonly string[]): Promise<void> {
  await sql`UPDATE outbox_event SET failed_at = now(), last_error = 'too large', publish_attempts = 3
    WHERE event_id IN (${sql.join(eventIds)})`.execute(testDb.db);
}

async function killInboxRows(eventIds: readonly string[]): Promise<void> {
  await sql`UPDATE inbox_event SET dead_at = now(), attempts = 5, last_error = 'boom'
    WHERE event_id IN (${sql.join(eventIds)})`.execute(testDb.db);
}

async function park(topic: string, value: Buffer): Promise<string> {
  const result = await sql<{ id: string }>`
    INSERT INTO parked_message (consumer, topic, kafka_partition, kafka_offset, message_key,
      message_value, header_names, header_values, reason)
    VALUES ('-consumer', ${topic}, 0, 7, ${Buffer.from('order-1')}, ${value},
      ${[Buffer.from('event_id'), Buffer.from('trace')]}, ${[Buffer.from(randomUUID()), Buffer.from([0xff, 0x00])]},
      'payload is not JSON')
    RETURNING id`.execute(testDb.db);
  return result.rows[0]?.id ?? '';
}

it('status: backlog, oldest age, stuck and retained rows per table, as a table or JSON', async () => {
  const [failed] = await enqueue('t', ['a', 'b']);
  await failRows([failed ?? '']);
  const [dead] = await seedInbox(testDb.db, [
    { key: 'a', eventType: 'X' },
    { key: 'b', eventType: 'X' },
  ]);
  await killInboxRows([dead ?? '']);
  await park('t', Buffer.from('{'));

  const json = await cli(['status', '--json']);
  expect(json.code).toBe(0);
  const rows = JSON.parse(json.out) as { table: string; backlog: number; stuck: number }[];
  expect(rows.map(({ table, backlog, stuck }) => ({ table, backlog, stuck }))).toEqual([
    { table: 'outbox_event', backlog: 2, stuck: 1 },
    { table: 'inbox_event', backlog: 1, stuck: 1 },
    { table: 'processed_event', backlog: 0, stuck: 0 },
    { table: 'parked_message', backlog: 0, stuck: 1 },
  ]);
  const human = await cli(['status']);
  expect(human.out.split('\n')[0]).toMatch(
    /^table\s+backlog\s+oldestAgeSeconds\s+stuck\s+retained$/,
  );
  expect(human.out).toMatch(/^outbox_event\s+2\s+\d+\.\d\s+1\s+0$/m);
});

it('failed list|retry|skip: a topic starting with "-" is a value, skip needs --yes', async () => {
  const topic = `-${randomUUID().slice(0, 8)}`;
  const [first, second] = await enqueue(topic, ['k', 'k']);
  await enqueue('other', ['z']);
  await failRows([first ?? '']);

  const list = await cli(['failed', 'list', '--topic', topic, '--json']);
  expect(list.code).toBe(0);
  expect(JSON.parse(list.out)).toMatchObject([{ eventId: first, topic, waitingBehind: 1 }]);
  expect((await cli(['failed', 'list', '--topic', 'other'])).out).toBe('no FAILED outbox rows');

  const refused = await cli(['failed', 'skip', first ?? '']);
  expect(refused.code).toBe(2);
  expect(refused.err).toMatch(/--yes/);
  expect(await count(testDb.db, 'outbox_event WHERE skipped_at IS NOT NULL')).toBe(0);

  // A row that is not FAILED is named, and the exit code says not everything was done.
  const partly = await cli(['failed', 'retry', first ?? '', second ?? '', '--json']);
  expect(partly).toMatchObject({ code: 1 });
  expect(JSON.parse(partly.out)).toEqual({ retried: 1, requested: 2 });
  await failRows([first ?? '']);
  const skipped = await cli(['failed', 'skip', first ?? '', '--yes']);
  expect(skipped).toMatchObject({ code: 0, out: 'skipped 1 of 1' });
  expect(await count(testDb.db, 'outbox_event WHERE skipped_at IS NOT NULL')).toBe(1);
});

it('dead list|requeue|discard', async () => {
  const ids = await seedInbox(testDb.db, [
    { key: 'a', eventType: 'X' },
    { key: 'b', eventType: 'Y' },
    { key: 'c', eventType: 'Z' },
  ]);
  await killInboxRows(ids.slice(0, 2));
  const list = await cli(['dead', 'list', '--consumer-group', 'test', '--json']);
  expect(JSON.parse(list.out).map((row: { eventId: string }) => row.eventId)).toEqual(
    ids.slice(0, 2),
  );
  expect((await cli(['dead', 'list', '--consumer-group', '-nobody'])).out).toBe(
    'no dead inbox rows',
  );

  expect(await cli(['dead', 'requeue', ids[0] ?? ''])).toMatchObject({
    code: 0,
    out: 'requeued 1 of 1',
  });
  expect(await count(testDb.db, 'inbox_event WHERE dead_at IS NULL AND NOT processed')).toBe(2);
  expect((await cli(['dead', 'discard', ids[1] ?? ''])).code).toBe(2);
  expect(await cli(['dead', 'discard', ids[1] ?? '', '--yes'])).toMatchObject({ code: 0 });
  expect(await count(testDb.db, 'inbox_event WHERE processed')).toBe(1);
  // A row that is not dead is not discarded.
  expect(await cli(['dead', 'discard', ids[2] ?? '', '--yes'])).toMatchObject({ code: 1 });
  expect((await cli(['dead', 'requeue', 'not-a-uuid'])).err).toMatch(
    /"not-a-uuid" is not an event id/,
  );
});

it('parked list|show|discard, bytes shown as they are', async () => {
  const id = await park('order.events', Buffer.from([0x7b, 0xff]));
  const list = await cli(['parked', 'list', '--consumer', '-consumer', '--json']);
  expect(JSON.parse(list.out)).toMatchObject([
    { id, consumer: '-consumer', reason: 'payload is not JSON' },
  ]);
  expect((await cli(['parked', 'list'])).out).toMatch(
    new RegExp(`^${id}\\s+-consumer\\s+order.events`, 'm'),
  );

  const show = JSON.parse((await cli(['parked', 'show', id, '--json'])).out);
  expect(show.key).toEqual({ text: 'order-1' });
  expect(show.value).toEqual({ base64: Buffer.from([0x7b, 0xff]).toString('base64') });
  expect(show.headers[1]).toEqual({ name: 'trace', value: { base64: '/wA=' } });
  expect((await cli(['parked', 'show', '999999'])).code).toBe(1);

  expect((await cli(['parked', 'discard', id])).code).toBe(2);
  expect(await cli(['parked', 'discard', id, '--yes'])).toMatchObject({
    code: 0,
    out: 'discarded 1 of 1',
  });
  expect(await count(testDb.db, 'parked_message')).toBe(0);
});

it.each(['kafkajs', 'platformatic'] as const)(
  'parked requeue produces the message again to its topic, as received, then deletes it (KAFKA_CLIENT=%s)',
  async (client) => {
    const kafka = createKafka();
    const topic = await createTopic(kafka, 'requeue');
    const value = Buffer.from('{"fixed":true}');
    const id = await park(topic, value);
    expect((await cli(['parked', 'requeue', id])).err).toMatch(/KAFKA_BROKERS is not set/);
    const brokers = stack().kafkaBrokers.join(',');
    // Which client sent it: @platformatic/kafka tells of each send on its diagnostics channel.
    let platformaticSends = 0;
    const onSend = (): void => {
      platformaticSends += 1;
    };
    producerSendsChannel.start.subscribe(onSend);
    const result = await cli(['parked', 'requeue', id], {
      KAFKA_BROKERS: brokers,
      KAFKA_CLIENT: client,
    }).finally(() => producerSendsChannel.start.unsubscribe(onSend));
    expect(result).toMatchObject({ code: 0, out: 'requeued 1 of 1' });
    expect(platformaticSends > 0).toBe(client === 'platformatic');
    const collected = await collectTopic(kafka, topic);
    try {
      const [message] = await pollUntil(() => collected.messages.length > 0 && collected.messages, {
        timeoutMs: 30_000,
        description: 'the requeued message on its topic',
      });
      expect(message).toMatchObject({ key: 'order-1', value: value.toString() });
      expect(await count(testDb.db, 'parked_message')).toBe(0);
    } finally {
      await collected.stop();
    }
  },
);

it('parked requeue refuses a KAFKA_CLIENT it does not know, and keeps the row', async () => {
  const id = await park('any-topic', Buffer.from('{}'));
  const result = await cli(['parked', 'requeue', id], {
    KAFKA_BROKERS: stack().kafkaBrokers.join(','),
    KAFKA_CLIENT: 'rdkafka',
  });
  expect(result).toMatchObject({ code: 2 });
  expect(result.err).toMatch(/KAFKA_CLIENT must be kafkajs or platformatic, not "rdkafka"/);
  expect(await count(testDb.db, 'parked_message')).toBe(1);
});

it('retention --dry-run counts, --yes deletes, and a window shorter than the dedup one is refused', async () => {
  const ids = await enqueue('t', ['a', 'b', 'c']);
  await sql`UPDATE outbox_event SET published_at = now() - interval '2 hours'
    WHERE event_id IN (${sql.join(ids.slice(0, 2))})`.execute(testDb.db);
  const windows = ['--outbox-window', '1h', '--processed-event-window', '1h'];

  const dryRun = await cli(['retention', '--dry-run', ...windows, '--json']);
  expect(dryRun.code).toBe(0);
  expect(JSON.parse(dryRun.out)).toContainEqual({ table: 'outbox_event', wouldDelete: 2 });
  expect(await count(testDb.db, 'outbox_event')).toBe(3);

  expect((await cli(['retention', ...windows])).code).toBe(2);
  const run = await cli(['retention', '--yes', ...windows, '--batch-size', '1']);
  expect(run.out).toMatch(/^outbox_event\s+2$/m);
  expect(await count(testDb.db, 'outbox_event')).toBe(1);

  const refused = await cli(['retention', '--dry-run', ...windows, '--inbox-window', '30m']);
  expect(refused.code).toBe(1);
  expect(refused.err).toMatch(/inboxOlderThan .* is shorter than the processed_event window/);
  expect((await cli(['retention', '--dry-run', '--outbox-window', '7 days'])).err).toMatch(
    /--outbox-window must be a duration like 90s/,
  );
});

it('replay queues the selected rows again', async () => {
  await enqueue('t', ['a', 'b']);
  await sql`UPDATE outbox_event SET published_at = now()`.execute(testDb.db);
  const result = await cli(['replay', '--topic', 't', '--json']);
  expect(result).toMatchObject({ code: 0 });
  expect(JSON.parse(result.out)).toEqual({ queued: 2 });
  expect(await count(testDb.db, 'outbox_event WHERE published_at IS NULL')).toBe(2);
  expect((await cli(['replay'])).code).toBe(2);
});

it('replay refuses an outbox a CDC relay publishes, and says what to do instead', async () => {
  // What the CDC relay creates (cdc-relay.ts): its rows are never marked published.
  const publication = `outbox_cdc_test_${randomUUID().replaceAll('-', '_')}`;
  await enqueue('t', ['a', 'b']);
  await sql`CREATE PUBLICATION ${sql.id(publication)} FOR TABLE outbox_event`.execute(testDb.db);
  try {
    const result = await cli(['replay', '--topic', 't']);
    expect(result).toMatchObject({ code: 1, out: '' });
    expect(result.err).toContain(`published by CDC (publication ${publication})`);
    expect(result.err).toContain('outbox cdc remove --connector NAME --yes');
  } finally {
    await sql`DROP PUBLICATION ${sql.id(publication)}`.execute(testDb.db);
  }
  expect((await cli(['replay', '--topic', 't', '--json'])).out).toBe('{"queued":0}');
});

it('as a program: usage errors exit 2, a database that cannot be reached exits 1', async () => {
  const bin = fileURLToPath(new URL('../../src/cli/outbox.ts', import.meta.url));
  const run = async (args: string[], env: NodeJS.ProcessEnv) => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], { env });
      return { code: 0, stdout, stderr: '' };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  expect(await run(['status', '--json'], { DATABASE_URL: testDb.url })).toMatchObject({ code: 0 });
  const unknown = await run(['frobnicate'], { DATABASE_URL: testDb.url });
  expect(unknown).toMatchObject({ code: 2 });
  expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  expect(await run(['status'], {})).toMatchObject({
    code: 2,
    stderr: expect.stringMatching(/DATABASE_URL is not set/),
  });
  const unreachable = await run(['status'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  expect(unreachable.code).toBe(1);
});
