import { randomUUID } from 'node:crypto';
import { Stack } from '@outbox-inbox/infra';
import type {} from '@outbox-inbox/infra/vitest-global-setup';
import { migrateOutbox, type OutboxTables } from '@outbox-inbox/outbox';
import { createDatabase } from '@outbox-inbox/service-kit';
import { pino } from 'pino';
import { afterAll, expect, inject, it } from 'vitest';
import {
  openRedeliveryReader,
  type RedeliveryReader,
} from '../../src/dashboard/event-redeliveries.ts';

const stack = Stack.open(inject('stackName'));
let reader: RedeliveryReader | undefined;
afterAll(async () => {
  await reader?.close();
});

/** A database with the outbox's tables, as each service has one. */
async function serviceDatabase(prefix: string) {
  const url = await stack.createDatabase(`${prefix}_${randomUUID().slice(0, 8)}`);
  const db = createDatabase<OutboxTables>({ url, poolSize: 1, logger: pino({ level: 'silent' }) });
  await migrateOutbox(db);
  return { url, db };
}

it("reads each event's redeliveries from the payment inbox and the order dedup rows", async () => {
  const payments = await serviceDatabase('dash_payments');
  const orders = await serviceDatabase('dash_orders');
  const created = randomUUID();
  const repeatedPayment = randomUUID();
  const quietPayment = randomUUID();
  const notAsked = randomUUID();
  const inboxRow = (eventId: string, redeliveries: number) => ({
    event_id: eventId,
    consumer_group: 'payment-service',
    event_type: 'OrderCreated',
    aggregate_type: 'order',
    aggregate_id: 'o',
    partition_key: 'o',
    payload: '{}',
    topic: 'order.events',
    kafka_partition: 0,
    kafka_offset: 1,
    occurred_at: new Date(),
    redeliveries,
  });
  await payments.db
    .insertInto('inbox_event')
    .values([inboxRow(created, 2), inboxRow(notAsked, 5)])
    .execute();
  await orders.db
    .insertInto('processed_event')
    .values([
      { consumer: 'order-status', event_id: repeatedPayment, redeliveries: 1 },
      { consumer: 'order-status', event_id: quietPayment },
    ])
    .execute();
  await payments.db.destroy();
  await orders.db.destroy();

  reader = openRedeliveryReader([orders.url, payments.url], 5000);
  const counts = await reader.read([created, repeatedPayment, quietPayment]);
  expect(Object.fromEntries(counts)).toEqual({ [created]: 2, [repeatedPayment]: 1 });
  expect((await reader.read([])).size).toBe(0);
});
