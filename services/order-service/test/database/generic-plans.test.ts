import { randomUUID } from 'node:crypto';
import { genericPlanPool, wholeTableReads } from '@outbox-inbox/infra';
import type { ReceivedEvent } from '@outbox-inbox/outbox';
import { runRetentionExclusively } from '@outbox-inbox/outbox/ops';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyPaymentEvents, type OrderDatabase } from '../../src/index.ts';
import { createOrders } from '../../src/orders/create-orders.ts';
import { createOrderApiContext, type OrderApiContext } from '../support/order-api-context.ts';

/*
 * The service's pools prepare their statements, so PostgreSQL may keep a generic plan for
 * each: one made without the values, which guesses ten rows for an array parameter. The two
 * statements that join an array to a table by its key (the consumer's UPDATE of orders, the
 * api's UPDATE of idempotency keys) run here on their generic plans against 2,000 rows. Without
 * the `= ANY` each also says, both hash-joined a read of the whole table: at every payment
 * event, and at every keyed POST, until the table grew past several thousand rows. And
 * retention, which plans its batches for their cutoff, finds old keys by their age index
 * (migration 0003); without it, it read every key.
 */

const ROWS = 2000;
let ctx: OrderApiContext;
let generic: Kysely<OrderDatabase>;
let plans: string[];

beforeAll(async () => {
  ctx = await createOrderApiContext();
  await sql`INSERT INTO orders (id, customer_id, amount, currency, status)
    SELECT gen_random_uuid(), 'c' || g, 100, 'EUR', 'PENDING' FROM generate_series(1, ${ROWS}) g`.execute(
    ctx.db,
  );
  await sql`INSERT INTO idempotency_key (key, request_hash, response_status, response_body)
    SELECT 'k' || g, 'h', 201, '{}' FROM generate_series(1, ${ROWS}) g`.execute(ctx.db);
  await sql`ANALYZE orders`.execute(ctx.db);
  await sql`ANALYZE idempotency_key`.execute(ctx.db);
  const plansPool = genericPlanPool(ctx.databaseUrl);
  plans = plansPool.plans;
  generic = new Kysely<OrderDatabase>({ dialect: new PostgresDialect({ pool: plansPool.pool }) });
});
afterAll(async () => {
  await generic.destroy();
  await ctx.close();
});

function paymentCompleted(orderId: string): ReceivedEvent {
  const paymentId = randomUUID();
  return {
    eventId: randomUUID(),
    eventType: 'PaymentCompleted',
    aggregateType: 'payment',
    aggregateId: paymentId,
    partitionKey: orderId,
    payload: {
      schemaVersion: 1,
      paymentId,
      orderId,
      amount: 100,
      currency: 'EUR',
      completedAt: new Date().toISOString(),
    },
    occurredAt: new Date(),
    topic: 'payment.events',
    partition: 0,
    offset: '0',
    headers: {},
  };
}

it('applies payment results to their orders through the primary key, not a read of every order', async () => {
  const { id } = await ctx.db.selectFrom('orders').select('id').limit(1).executeTakeFirstOrThrow();
  plans.length = 0;
  await generic.transaction().execute((trx) => applyPaymentEvents(trx, [paymentCompleted(id)]));
  expect(plans.some((plan) => plan.includes('Update on orders'))).toBe(true);
  expect(wholeTableReads(plans, 'orders')).toEqual([]);
  const order = await ctx.db
    .selectFrom('orders')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(order.status).toBe('PAID');
});

it('stores a keyed response through the primary key, not a read of every key', async () => {
  plans.length = 0;
  const [outcome] = await createOrders(generic, [
    {
      body: { customerId: 'c-keyed', amount: 100, currency: 'EUR' },
      idempotencyKey: `key-${randomUUID()}`,
      trace: undefined,
    },
  ]);
  expect(outcome).toMatchObject({ status: 201 });
  expect(plans.some((plan) => plan.includes('Update on idempotency_key'))).toBe(true);
  expect(wholeTableReads(plans, 'idempotency_key')).toEqual([]);
});

it('retention finds old idempotency keys by their age index, not by reading every key', async () => {
  await sql`INSERT INTO idempotency_key (key, request_hash, created_at)
    SELECT 'old-' || g, 'h', now() - interval '30 days' FROM generate_series(1, 5) g`.execute(
    ctx.db,
  );
  plans.length = 0;
  const day = 86_400_000;
  const result = await runRetentionExclusively(generic, {
    olderThan: 30 * day,
    tables: [{ table: 'idempotency_key', column: 'created_at', olderThan: 7 * day }],
  });
  expect(result?.byTable['idempotency_key']).toBe(5);
  expect(plans.some((plan) => plan.includes('Delete on idempotency_key'))).toBe(true);
  expect(wholeTableReads(plans, 'idempotency_key')).toEqual([]);
});
