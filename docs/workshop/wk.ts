#!/usr/bin/env node
/**
 * `./wk` (the wrapper at the repository root runs this file on Node 24): the workshop's small
 * helper. Finds the running stack (`$STACK_NAME`, default `dev`) through its state file, like
 * `./pnpm stack` does, so the exercises and the docs' commands work against `./pnpm dev` and
 * against the test's own stack alike. Waits poll with a deadline (`WK_TIMEOUT_S`, 90 s);
 * nothing sleeps blindly.
 *
 *   ./wk url <component>                        base URL of a role
 *   ./wk brokers                                Kafka bootstrap servers
 *   ./wk db-url <orders|payments|naive>         PostgreSQL connection string
 *   ./wk metric <component> <name>              one Prometheus value
 *   ./wk wait-metric <component> <name> <'>='|'<='|'=='> <value>
 *   ./wk orders <count> [amount]                POST orders, print their ids
 *   ./wk wait-orders <status> <id>...           until every order has it
 *   ./wk wait-published <database> <event-id>   until that outbox row is marked published
 *   ./wk sql <database> <query>                 print the rows
 *   ./wk value <database> <query>               print the first column of the first row
 *                                               (waiting while there is none, or it is NULL)
 *   ./wk duplicates <topic> [event-id]...       event ids on the topic more than once, or
 *                                               how many times that one event is on it, or
 *                                               how many of those events are on it more
 *                                               than once
 *   ./wk outbox <orders|payments> <command>...  the library's `outbox` command line on that
 *                                               service's database (and Kafka, and Kafka
 *                                               Connect when the stack runs it)
 *   ./wk produce <topic> <key> <value>          send one raw message (not an event: practice)
 *   ./wk naive-after-commit <count>             the forbidden X2 writer
 *   ./wk naive-report [id]...                   naive orders vs their events
 */
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel, type RetryOptions } from 'kafkajs';
import pg from 'pg';
import { findRepoRoot, Stack, pollUntil } from '@outbox-inbox/infra';
// The suite's own reader and naive writer: the workshop shows exactly what the tests check.
import {
  createOrderSendingAfterCommit,
  naiveSchema,
  naiveTopic,
  readWholeTopic,
  type TopicMessage,
} from '@outbox-inbox/e2e';

const timeoutMs = Number(process.env['WK_TIMEOUT_S'] ?? 90) * 1000;
const stack = openStack(process.env['STACK_NAME'] ?? 'dev');

/** The running stack, or one line that says how to start it (not a stack trace). */
function openStack(name: string): Stack {
  try {
    return Stack.open(name);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`wk: ${message}; start the system first with ./pnpm dev (in another shell)`);
    process.exit(1);
  }
}

function url(component: string): string {
  const endpoints = stack.state.components[component]?.endpoints ?? {};
  const found = endpoints['url'] ?? endpoints['health']?.replace(/\/health\/ready$/, '');
  if (found === undefined) throw new Error(`no role "${component}" with an HTTP port in the stack`);
  return found;
}

async function metric(component: string, name: string): Promise<number> {
  const text = await (await fetch(`${url(component)}/metrics`)).text();
  // Sum over label sets: `parked_messages_total{consumer="…"} 3` lines included.
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

async function withClient<T>(database: string, use: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: stack.postgresUrl(database) });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

const compare = {
  '>=': (a: number, b: number) => a >= b,
  '<=': (a: number, b: number) => a <= b,
  '==': (a: number, b: number) => a === b,
};

/** One order created through the order API: its id, or an error with the API's answer. */
async function postOrder(customerId: string, amount: number): Promise<string> {
  const response = await fetch(`${url('order-api')}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ customerId, amount, currency: 'EUR' }),
  });
  const body = (await response.json()) as { id?: string };
  if (response.status !== 201 || !body.id)
    throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(body)}`);
  return body.id;
}

/** A Kafka client for wk's own one-off admin and producer work, its logging silenced. */
function silentKafka(clientId: string, retry?: RetryOptions): Kafka {
  return new Kafka({
    clientId,
    brokers: stack.kafkaBrokers,
    logLevel: logLevel.NOTHING,
    ...(retry === undefined ? {} : { retry }),
  });
}

async function waitMetric(args: string[]): Promise<void> {
  const [component = '', name = '', op = '>=', target = '0'] = args;
  const test = compare[op as keyof typeof compare];
  if (!test) throw new Error(`operator must be >=, <= or ==, not ${op}`);
  let last: number | undefined;
  const value = await pollUntil(
    async () => {
      const now = await metric(component, name).catch(() => undefined);
      if (now !== undefined && now !== last) console.log(`  ${name} = ${now}`);
      last = now ?? last;
      return now !== undefined && test(now, Number(target)) ? now : undefined;
    },
    { timeoutMs, intervalMs: 250, description: `${name} ${op} ${target} on ${component}` },
  );
  console.log(`${name} ${op} ${target}: yes (${value})`);
}

async function orders(args: string[]): Promise<void> {
  const count = Number(args[0] ?? 1);
  for (let n = 0; n < count; n++) {
    console.log(await postOrder(`workshop-${n + 1}`, Number(args[1] ?? 2500)));
  }
}

async function waitOrders(args: string[]): Promise<void> {
  const [status = 'PAID', ...ids] = args;
  await pollUntil(
    async () => {
      for (const id of ids) {
        const order = (await (await fetch(`${url('order-api')}/orders/${id}`)).json()) as {
          status?: string;
        };
        if (order.status !== status) return undefined;
      }
      return true;
    },
    { timeoutMs, intervalMs: 250, description: `${ids.length} order(s) to be ${status}` },
  );
  console.log(`${ids.length} order(s) ${status}`);
}

async function waitPublished(args: string[]): Promise<void> {
  const [database = 'orders', eventId = ''] = args;
  const publishedAt = await pollUntil(
    () =>
      withClient(database, async (client) => {
        const { rows } = await client.query<{ published_at: Date | null }>(
          'SELECT published_at FROM outbox_event WHERE event_id = $1',
          [eventId],
        );
        return rows[0]?.published_at ?? undefined;
      }),
    { timeoutMs, intervalMs: 250, description: `outbox row ${eventId} to be published` },
  );
  console.log(`event ${eventId} marked published at ${publishedAt.toISOString()}`);
}

async function sql(args: string[]): Promise<void> {
  const [database = 'orders', query = 'SELECT 1'] = args;
  const rows = await withClient(database, async (client) => (await client.query(query)).rows);
  console.table(rows);
}

async function firstValue(args: string[]): Promise<void> {
  const [database = 'orders', query = 'SELECT 1'] = args;
  // Waits while the query finds nothing (a row the system has not written yet); a query
  // that fails fails at once.
  const outcome = await pollUntil(
    () =>
      withClient(database, async (client) => {
        const { rows } = await client.query({ text: query, rowMode: 'array' });
        const first: unknown = (rows[0] as unknown[] | undefined)?.[0];
        return first ?? undefined;
      }).then(
        (value) => (value === undefined ? undefined : { value }),
        (error: unknown) => ({ error }),
      ),
    { timeoutMs, intervalMs: 250, description: `a row from: ${query}` },
  );
  if ('error' in outcome) throw outcome.error;
  const { value } = outcome;
  console.log(value instanceof Date ? value.toISOString() : String(value));
}

/** Where each event id sits on the topic, as `partition/offset`, in the order read. */
function offsetsByEventId(messages: TopicMessage[]): Map<string, string[]> {
  const offsets = new Map<string, string[]>();
  for (const message of messages) {
    const seen = offsets.get(message.eventId) ?? [];
    seen.push(`${message.partition}/${message.offset}`);
    offsets.set(message.eventId, seen);
  }
  return offsets;
}

/** `event <id> delivered <n>x`, with where each copy sits when there is one. */
function deliveredLine(offsets: Map<string, string[]>, eventId: string): string {
  const at = offsets.get(eventId) ?? [];
  return (
    `event ${eventId} delivered ${at.length}x` +
    (at.length > 0 ? ` (partition/offset ${at.join(', ')})` : '')
  );
}

/** For several given events: the ones not delivered exactly once, and how many repeat. */
function reportGivenEvents(offsets: Map<string, string[]>, topic: string, only: string[]): void {
  const times = (eventId: string) => offsets.get(eventId)?.length ?? 0;
  for (const eventId of only.filter((id) => times(id) !== 1))
    console.log(`  ${deliveredLine(offsets, eventId)}`);
  const repeated = only.filter((id) => times(id) > 1).length;
  const missing = only.filter((id) => times(id) === 0).length;
  console.log(
    `${repeated} of ${only.length} events delivered more than once` +
      (missing > 0 ? `, ${missing} not on ${topic}` : ''),
  );
}

/** Every event on the topic more than once, and how many there are. */
function reportAllDuplicates(offsets: Map<string, string[]>): void {
  const repeated = [...offsets].filter(([, at]) => at.length > 1);
  for (const [eventId, at] of repeated)
    console.log(`  event ${eventId} delivered ${at.length}x (partition/offset ${at.join(', ')})`);
  console.log(`${repeated.length} duplicated event(s)`);
}

async function duplicates(args: string[]): Promise<void> {
  const [topic = 'order.events', ...only] = args;
  const messages = await readWholeTopic(stack.kafkaBrokers, topic);
  const offsets = offsetsByEventId(messages);
  console.log(`${messages.length} messages, ${offsets.size} distinct events on ${topic}`);
  // The learner's own events: earlier exercises may have left other duplicates behind.
  if (only.length === 1) console.log(deliveredLine(offsets, only[0] ?? ''));
  else if (only.length > 1) reportGivenEvents(offsets, topic, only);
  else reportAllDuplicates(offsets);
}

function outbox(args: string[]): void {
  const [database = '', ...command] = args;
  if (database !== 'orders' && database !== 'payments')
    throw new Error(`wk outbox needs the database first: orders or payments, not "${database}"`);
  // The same program an operator runs (`outbox …`), pointed at this stack.
  const cli = `${findRepoRoot()}/packages/outbox/src/cli/outbox.ts`;
  const connectUrl = stack.state.components['connect']?.endpoints['url'];
  const run = spawnSync(process.execPath, [cli, ...command], {
    stdio: 'inherit',
    env: {
      ...process.env,
      DATABASE_URL: stack.postgresUrl(database),
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      ...(connectUrl === undefined ? {} : { CONNECT_URL: connectUrl }),
    },
  });
  process.exitCode = run.status ?? 1;
}

async function produce(args: string[]): Promise<void> {
  const [topic = '', key = '', value = ''] = args;
  const producer = silentKafka('wk').producer();
  await producer.connect();
  try {
    const [sent] = await producer.send({ topic, messages: [{ key, value }] });
    console.log(`sent to ${topic} partition ${sent?.partition} offset ${sent?.baseOffset}`);
  } finally {
    await producer.disconnect();
  }
}

async function naiveAfterCommit(args: string[]): Promise<void> {
  await stack.createDatabase('naive');
  await withClient('naive', (client) => client.query(naiveSchema));
  const pool = new pg.Pool({ connectionString: stack.postgresUrl('naive'), max: 1 });
  // Few retries: an after-commit hook does not wait long, the HTTP caller has its answer.
  const producer = silentKafka('naive', {
    retries: 1,
    initialRetryTime: 100,
    maxRetryTime: 300,
  }).producer();
  await producer.connect().catch(() => console.log('  (producer could not connect)'));
  let failed = 0;
  for (let n = 0; n < Number(args[0] ?? 5); n++) {
    const id = await createOrderSendingAfterCommit({ pool, producer }, 1000 + n, () => {
      failed++;
    });
    console.log(`  naive order ${id} committed`);
  }
  console.log(`${failed} send(s) failed after commit: the orders exist, their events do not`);
  await producer.disconnect().catch(() => undefined);
  await pool.end();
}

async function naiveReport(args: string[]): Promise<void> {
  // The given ids (this run's), or every naive order there is.
  const ids =
    args.length > 0
      ? args
      : await withClient('naive', async (client) =>
          (await client.query<{ id: string }>('SELECT id FROM naive_order')).rows.map(
            (row) => row.id,
          ),
        );
  // No naive send ever succeeded on a fresh stack, so the topic may not exist yet.
  const admin = silentKafka('wk').admin();
  await admin.connect();
  await admin
    .createTopics({ topics: [{ topic: naiveTopic, numPartitions: 1 }], waitForLeaders: true })
    .finally(() => admin.disconnect());
  const keys = new Set(
    (await readWholeTopic(stack.kafkaBrokers, naiveTopic)).map((message) => message.key),
  );
  const lost = ids.filter((id) => !keys.has(id));
  console.log(`naive: ${ids.length} orders committed, ${lost.length} without an event (lost)`);
}

/** Each `./wk` command, as the comment at the top lists them. */
const commands = new Map<string, (args: string[]) => void | Promise<void>>([
  ['url', (args) => console.log(url(args[0] ?? ''))],
  ['brokers', () => console.log(stack.kafkaBrokers.join(','))],
  ['db-url', (args) => console.log(stack.postgresUrl(args[0] ?? 'orders'))],
  ['metric', async (args) => console.log(await metric(args[0] ?? '', args[1] ?? ''))],
  ['wait-metric', waitMetric],
  ['orders', orders],
  ['wait-orders', waitOrders],
  ['wait-published', waitPublished],
  ['sql', sql],
  ['value', firstValue],
  ['duplicates', duplicates],
  ['outbox', outbox],
  ['produce', produce],
  ['naive-after-commit', naiveAfterCommit],
  ['naive-report', naiveReport],
]);

async function main([command, ...args]: string[]): Promise<void> {
  const run = command === undefined ? undefined : commands.get(command);
  if (run === undefined)
    throw new Error(`unknown command "${command ?? ''}"; see the comment at the top of wk.ts`);
  await run(args);
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`wk: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
