import { randomUUID } from 'node:crypto';
import path from 'node:path';
import {
  Stack,
  accessMismatches,
  checkGrantsBlock,
  findRepoRoot,
  readGrants,
  type LoginAccessCase,
} from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { pino } from 'pino';
import { beforeAll, expect, inject, it } from 'vitest';
import { paymentService } from '../../src/index.ts';

// What each role's login may do in the payments database, as the migrate step grants it from
// the roles' declarations (`access` in src/payment-service.ts). Each statement runs in a
// transaction that is rolled back; a refusal must be PostgreSQL's "permission denied".

let url = '';

beforeAll(async () => {
  url = await Stack.open(inject('stackName')).createDatabase(
    `payments_logins_${randomUUID().slice(0, 8)}`,
  );
  await paymentService.migrate({ url, logger: pino({ level: 'silent' }) });
});

const newPayment = `INSERT INTO payments (id, order_id, customer_id, amount, currency, status)
  VALUES (gen_random_uuid(), gen_random_uuid(), 'c', 100, 'EUR', 'COMPLETED')`;
const newEvent = `INSERT INTO outbox_event (event_id, event_type, aggregate_type, aggregate_id,
  topic, partition_key, payload, headers)
  VALUES (gen_random_uuid(), 'T', 'payment', 'a', 'payment.events', 'a', '{}', '{}')`;
const markProcessed = 'UPDATE inbox_event SET processed = true, processed_at = now()';

const cases: readonly LoginAccessCase[] = [
  {
    login: 'payment-api',
    allowed: ['SELECT * FROM payments', 'SELECT count(published_at) FROM outbox_event'],
    refused: [
      [newPayment, 'payments'],
      ['SELECT payload FROM inbox_event', 'inbox_event'],
      [newEvent, 'outbox_event'],
    ],
  },
  {
    login: 'payment-consumer',
    allowed: ['SELECT event_id, redeliveries FROM inbox_event'],
    refused: [
      ['SELECT * FROM payments', 'payments'],
      [markProcessed, 'inbox_event'],
      ['DELETE FROM inbox_event', 'inbox_event'],
    ],
  },
  {
    login: 'payment-processor',
    allowed: [newPayment, newEvent, markProcessed],
    refused: [
      ['DELETE FROM payments', 'payments'],
      [`UPDATE inbox_event SET payload = '{}'`, 'inbox_event'],
      [`UPDATE payments SET amount = 0`, 'payments'],
    ],
  },
  {
    login: 'payment-relay',
    allowed: ['SELECT id, payload FROM outbox_event WHERE published_at IS NULL'],
    refused: [
      ['SELECT * FROM payments', 'payments'],
      [markProcessed, 'inbox_event'],
    ],
  },
  {
    login: 'payment-retention',
    allowed: ['DELETE FROM processed_event WHERE processed_at < now()'],
    refused: [
      ['SELECT * FROM payments', 'payments'],
      ['DELETE FROM payments', 'payments'],
    ],
  },
];

it.each(cases)('$login may do what its role declares and is refused the rest', async (role) => {
  expect(await accessMismatches(url, role)).toEqual([]);
});

it("docs/architecture.md's grants table for the payments database is what PostgreSQL holds", async () => {
  const grants = await readGrants(url, Object.values(paymentService.logins));
  const doc = path.join(findRepoRoot(), 'docs', 'architecture.md');
  const write = process.env['WRITE_GRANTS_TABLE'] === '1';
  expect(checkGrantsBlock(doc, 'payments', grants, { write })).toBeUndefined();
});
