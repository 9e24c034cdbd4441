#!/usr/bin/env node
/**
 * `wk`: the workshop's small helper. Finds the running stack (`$STACK_NAME`, default `dev`)
 * through its state file, like `pnpm stack` does, so the exercises work against `pnpm dev`
 * and against the test's own stack alike. Waits poll with a deadline; nothing sleeps blindly.
 *
 *   node docs/workshop/wk.ts url <component>                  base URL of a role
 *   node docs/workshop/wk.ts brokers                          Kafka bootstrap servers
 *   node docs/workshop/wk.ts db-url <orders|payments|naive>   PostgreSQL connection string
 *   node docs/workshop/wk.ts metric <component> <name>        one Prometheus value
 *   node docs/workshop/wk.ts wait-metric <component> <name> <'>='|'<='|'=='> <value>
 *   node docs/workshop/wk.ts orders <count> [amount]          POST orders, print their ids
 *   node docs/workshop/wk.ts wait-orders <status> <id>...     until every order has it
 *   node docs/workshop/wk.ts sql <database> <query>           print the rows
 *   node docs/workshop/wk.ts duplicates <topic>               event ids on the topic more than once
 *   node docs/workshop/wk.ts naive-after-commit <count>       the forbidden X2 writer
 *   node docs/workshop/wk.ts naive-report [id]...             naive orders vs their events
 */
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { Stack, pollUntil } from '@outbox-inbox/infra';
// The suite's own reader and naive writer: the workshop shows exactly what the tests check.
import {
  createOrderSendingAfterCommit,
  naiveSchema,
  naiveTopic,
  readWholeTopic,
} from '@outbox-inbox/e2e';

const timeoutMs = Number(process.env['WK_TIMEOUT_S'] ?? 90) * 1000;
const stack = Stack.open(process.env['STACK_NAME'] ?? 'dev');

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

async function main([command, ...args]: string[]): Promise<void> {
  switch (command) {
    case 'url':
      console.log(url(args[0] ?? ''));
      return;
    case 'brokers':
      console.log(stack.kafkaBrokers.join(','));
      return;
    case 'db-url':
      console.log(stack.postgresUrl(args[0] ?? 'orders'));
      return;
    case 'metric':
      console.log(await metric(args[0] ?? '', args[1] ?? ''));
      return;
    case 'wait-metric': {
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
      return;
    }
    case 'orders': {
      const count = Number(args[0] ?? 1);
      for (let n = 0; n < count; n++) {
        const response = await fetch(`${url('order-api')}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            customerId: `workshop-${n + 1}`,
            amount: Number(args[1] ?? 2500),
            currency: 'EUR',
          }),
        });
        const body = (await response.json()) as { id?: string };
        if (response.status !== 201 || !body.id)
          throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(body)}`);
        console.log(body.id);
      }
      return;
    }
    case 'wait-orders': {
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
      return;
    }
    case 'sql': {
      const [database = 'orders', query = 'SELECT 1'] = args;
      const rows = await withClient(database, async (client) => (await client.query(query)).rows);
      console.table(rows);
      return;
    }
    case 'duplicates': {
      const messages = await readWholeTopic(stack.kafkaBrokers, args[0] ?? 'order.events');
      const offsets = new Map<string, string[]>();
      for (const message of messages) {
        const seen = offsets.get(message.eventId) ?? [];
        seen.push(`${message.partition}/${message.offset}`);
        offsets.set(message.eventId, seen);
      }
      const repeated = [...offsets].filter(([, at]) => at.length > 1);
      console.log(`${messages.length} messages, ${offsets.size} distinct events`);
      for (const [eventId, at] of repeated)
        console.log(
          `  event ${eventId} delivered ${at.length}x (partition/offset ${at.join(', ')})`,
        );
      console.log(`${repeated.length} duplicated event(s)`);
      return;
    }
    case 'naive-after-commit': {
      await stack.createDatabase('naive');
      await withClient('naive', (client) => client.query(naiveSchema));
      const pool = new pg.Pool({ connectionString: stack.postgresUrl('naive'), max: 1 });
      // Few retries: an after-commit hook does not wait long, the HTTP caller has its answer.
      const producer = new Kafka({
        clientId: 'naive',
        brokers: stack.kafkaBrokers,
        logLevel: logLevel.NOTHING,
        retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 300 },
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
      return;
    }
    case 'naive-report': {
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
      const admin = new Kafka({
        clientId: 'wk',
        brokers: stack.kafkaBrokers,
        logLevel: logLevel.NOTHING,
      }).admin();
      await admin.connect();
      await admin
        .createTopics({ topics: [{ topic: naiveTopic, numPartitions: 1 }], waitForLeaders: true })
        .finally(() => admin.disconnect());
      const keys = new Set(
        (await readWholeTopic(stack.kafkaBrokers, naiveTopic)).map((message) => message.key),
      );
      const lost = ids.filter((id) => !keys.has(id));
      console.log(`naive: ${ids.length} orders committed, ${lost.length} without an event (lost)`);
      return;
    }
    default:
      throw new Error(`unknown command "${command ?? ''}"; see the comment at the top of wk.ts`);
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`wk: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
