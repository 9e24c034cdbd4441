import { randomUUID } from 'node:crypto';
import { Stack, findFreePort, pollUntil } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import {
  insertOrderRow,
  orderRoles,
  orderService,
  parseConfig,
  type OrderDatabase,
  type OrderServiceConfig,
} from '@outbox-inbox/order-service';
import {
  createDatabase,
  defineService,
  parseRoles,
  roleCommand,
  type RoleContext,
  type RunningService,
  type Stoppable,
} from '@outbox-inbox/service-kit';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { migrateService } from '../src/system/migrate-service.ts';
import { roleListings } from '../src/system/role-listings.ts';
import { roleProcesses } from '../src/system/role-processes.ts';

// The two steps of "Add a role" in docs/contributing.md, taken on a fixture service: order-service
// with one throwaway role more. Step 1 is the worker below; step 2 is its declaration. Nothing
// else is written, and everything that runs, deploys, scrapes or lists roles has it.

/** What the throwaway role saw: the number of orders, each time it counted. */
const counts: number[] = [];

/** Step 1, the worker: counts the orders every 50 ms until it is stopped. */
async function startOrderCounter(
  context: RoleContext<OrderDatabase, OrderServiceConfig>,
): Promise<Stoppable> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { n } = await context.db
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      counts.push(Number(n));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** Step 2, the declaration, beside the service's own roles. */
const fixtureService = defineService({
  ...orderService,
  roles: {
    ...orderRoles,
    'order-counter': {
      kind: 'worker',
      port: 3019,
      summary: 'counts orders (a test fixture)',
      start: startOrderCounter,
      access: { outbox: [], tables: [{ table: 'orders', privilege: 'SELECT', columns: ['id'] }] },
    },
  },
});

const stack = Stack.open(inject('stackName'));
let running: RunningService | undefined;
afterAll(async () => running?.stop());

describe('a role declared once in its service', () => {
  it('is a role of the service: --roles accepts it, it has its port and needs no Kafka', () => {
    expect(fixtureService.roles).toEqual([...orderService.roles, 'order-counter']);
    expect(parseRoles(['--roles', 'order-counter'], {}, fixtureService.roles)).toEqual([
      'order-counter',
    ]);
    expect(fixtureService.ports['order-counter']).toBe(3019);
    expect(fixtureService.rolesNeedKafka(['order-counter'])).toBe(false);
    expect(fixtureService.rolesNeedKafka(['order-counter', 'relay'])).toBe(true);
    expect(roleCommand(fixtureService, 'order-counter').args.slice(-3)).toEqual([
      'src/main.ts',
      '--roles',
      'order-counter',
    ]);
  });

  it('is a process of the launcher, a container of the compose file, a scrape target and a row of the table', () => {
    expect(roleProcesses({}, [fixtureService]).map((one) => one.name)).toContain(
      'order-order-counter',
    );
    const [compose, scrape, table] = roleListings.map((listing) =>
      listing.render([fixtureService]),
    );
    expect(compose).toContain(
      '  order-order-counter:\n    profiles: [app]\n    image: outbox-inbox/order-service\n    command: [src/main.ts, --roles, order-counter]',
    );
    expect(compose).toContain("      OPS_PORT: '3019'\n    ports:\n      - '3019:3019'");
    expect(scrape).toContain(
      "      - targets: ['127.0.0.1:3019']\n        labels: { service: order-service, role: order-counter }",
    );
    expect(table).toMatch(
      /\| `order-order-counter` +\| 3019 \| counts orders \(a test fixture\) +\|/,
    );
  });

  it('runs in a process of its own on a real database, serves health and metrics, and stops', async () => {
    const url = await stack.createDatabase(`add_a_role_${randomUUID().slice(0, 8)}`);
    await migrateService(fixtureService, url, stack.kafkaBrokers);
    const opsPort = await findFreePort();
    running = await fixtureService.start({
      config: parseConfig(
        { DATABASE_URL: url, HOST: '127.0.0.1', OPS_PORT: String(opsPort) },
        { needsKafka: false },
      ),
      roles: ['order-counter'],
      logger: pino({ level: process.env['FLOW_LOG_LEVEL'] ?? 'silent' }),
    });
    expect(running.url).toBe(`http://127.0.0.1:${opsPort}`);
    expect((await fetch(`${running.url}/health/ready`)).status).toBe(200);

    const orders = createDatabase<OrderDatabase>({ url, poolSize: 1, logger: pino() });
    try {
      await orders
        .transaction()
        .execute((trx) => insertOrderRow(trx, { customerId: 'c', amount: 100, currency: 'EUR' }));
    } finally {
      await orders.destroy();
    }
    await pollUntil(() => counts.at(-1) === 1, {
      timeoutMs: 10_000,
      description: 'the throwaway role to count the order',
    });
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toContain('process_cpu_seconds_total');

    await running.stop();
    running = undefined;
    await expect(fetch(`http://127.0.0.1:${opsPort}/health/ready`)).rejects.toThrow();
  });
});
