import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  Stack,
  accessMismatches,
  checkGrantsBlock,
  findRepoRoot,
  readGrants,
  probeAsLogin,
  type LoginAccessCase,
} from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { defineService } from '@outbox-inbox/service-kit';
import { pino } from 'pino';
import { beforeAll, expect, inject, it } from 'vitest';
import { orderRoles, orderService } from '../../src/index.ts';

// What each role's login may do in the orders database, as the migrate step grants it from the
// roles' declarations (`access` in src/order-service.ts). Each statement runs in a transaction
// that is rolled back; a refusal must be PostgreSQL's "permission denied" naming the table.

const logger = pino({ level: 'silent' });
let url = '';

beforeAll(async () => {
  url = await Stack.open(inject('stackName')).createDatabase(
    `orders_logins_${randomUUID().slice(0, 8)}`,
  );
  await orderService.migrate({ url, logger });
});

const someId = '00000000-0000-4000-8000-000000000001';
const newOrder = `INSERT INTO orders (id, customer_id, amount, currency, status)
  VALUES ('${someId}', 'c', 100, 'EUR', 'PENDING')`;
const newEvent = `INSERT INTO outbox_event (event_id, event_type, aggregate_type, aggregate_id,
  topic, partition_key, payload, headers)
  VALUES (gen_random_uuid(), 'T', 'order', 'a', 'order.events', 'a', '{}', '{}')`;

const cases: readonly LoginAccessCase[] = [
  {
    login: 'order-api',
    allowed: [newOrder, newEvent, 'SELECT * FROM order_history'],
    refused: [
      ['SELECT event_id FROM processed_event', 'processed_event'],
      [`UPDATE orders SET payment_status = 'PAID'`, 'orders'],
      ['DELETE FROM orders', 'orders'],
      ['SELECT payload FROM outbox_event', 'outbox_event'],
    ],
  },
  {
    login: 'order-relay',
    allowed: ['SELECT id, payload FROM outbox_event WHERE published_at IS NULL'],
    refused: [
      ['SELECT * FROM orders', 'orders'],
      [`UPDATE orders SET status = 'PAID'`, 'orders'],
      [`UPDATE outbox_event SET payload = '{}'`, 'outbox_event'],
      ['DELETE FROM outbox_event', 'outbox_event'],
    ],
  },
  {
    login: 'order-consumer',
    allowed: [
      `UPDATE orders SET status = 'PAID', payment_status = 'PAID' WHERE id = '${someId}'`,
      `SELECT id FROM orders WHERE id = '${someId}' FOR UPDATE`,
    ],
    refused: [
      [newEvent, 'outbox_event'],
      ['DELETE FROM orders', 'orders'],
      ['SELECT * FROM idempotency_key', 'idempotency_key'],
      [newOrder, 'orders'],
    ],
  },
  {
    login: 'order-retention',
    allowed: [`DELETE FROM idempotency_key WHERE created_at < now() - interval '1 day'`],
    refused: [
      ['SELECT * FROM orders', 'orders'],
      [`UPDATE idempotency_key SET response_body = NULL`, 'idempotency_key'],
      ['DELETE FROM orders', 'orders'],
    ],
  },
];

it.each(cases)('$login may do what its role declares and is refused the rest', async (role) => {
  expect(await accessMismatches(url, role)).toEqual([]);
});

it('a grant a declaration drops is revoked at the next migrate', async () => {
  const reads = 'SELECT status FROM orders';
  const widened = defineService({
    ...orderService,
    roles: {
      ...orderRoles,
      relay: {
        ...orderRoles.relay,
        access: { outbox: ['relay'], tables: [{ table: 'orders', privilege: 'SELECT' }] },
      },
    },
  });
  await widened.migrate({ url, logger });
  expect(await probeAsLogin(url, 'order-relay', reads)).toEqual({ done: true });
  await orderService.migrate({ url, logger });
  expect(await probeAsLogin(url, 'order-relay', reads)).toMatchObject({ code: '42501' });
});

it("docs/architecture.md's grants table for the orders database is what PostgreSQL holds", async () => {
  const grants = await readGrants(url, Object.values(orderService.logins));
  const doc = path.join(findRepoRoot(), 'docs', 'architecture.md');
  const write = process.env['WRITE_GRANTS_TABLE'] === '1';
  expect(checkGrantsBlock(doc, 'orders', grants, { write })).toBeUndefined();
});
