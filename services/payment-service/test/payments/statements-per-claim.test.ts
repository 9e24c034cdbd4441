import { randomUUID } from 'node:crypto';
import { pollUntil, statementCountingPool, type SentStatement } from '@outbox-inbox/infra';
import { startInboxProcessor, type InboxHandler } from '@outbox-inbox/outbox';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PaymentDatabase } from '../../src/database/schema.ts';
import { handleOrderCreated, handleOrderCreatedBatch, simulatedGateway } from '../../src/index.ts';
import {
  createPaymentTestContext,
  type PaymentTestContext,
} from '../support/payment-test-context.ts';

let ctx: PaymentTestContext;
/** Every statement the processor's connections send (BEGIN, SAVEPOINT, COMMIT included). */
let sent: SentStatement[];
let counted: Kysely<PaymentDatabase>;
beforeAll(async () => {
  ctx = await createPaymentTestContext();
  const counting = statementCountingPool(ctx.databaseUrl);
  sent = counting.sent;
  counted = new Kysely<PaymentDatabase>({ dialect: new PostgresDialect({ pool: counting.pool }) });
});
afterAll(async () => {
  await counted.destroy();
  await ctx.close();
});

const gateway = simulatedGateway({ amountLimit: 10_000, latencyMs: 0 });

/** The statements one claim of `orders` OrderCreated events costs, from claim to commit. */
async function statementsForOneClaim(
  handler: InboxHandler<PaymentDatabase>,
  orders: number,
): Promise<number> {
  await sql`TRUNCATE inbox_event`.execute(ctx.db);
  const rows = Array.from({ length: orders }, (_, n) => {
    const orderId = randomUUID();
    return {
      event_id: randomUUID(),
      consumer_group: 'payment-service',
      event_type: 'OrderCreated',
      aggregate_type: 'order',
      aggregate_id: orderId,
      partition_key: orderId,
      payload: JSON.stringify({
        schemaVersion: 1,
        orderId,
        customerId: 'c-1',
        // One declined, the rest paid.
        amount: n === 0 ? 99_999 : 100 + n,
        currency: 'EUR',
        createdAt: new Date().toISOString(),
      }),
      topic: 'order.events',
      kafka_partition: 0,
      kafka_offset: n,
      occurred_at: new Date(),
    };
  });
  await ctx.db.insertInto('inbox_event').values(rows).execute();
  sent.length = 0;
  const processor = startInboxProcessor<PaymentDatabase>({
    db: counted,
    logger: pino({ level: 'silent' }),
    // One worker, one claim of every row, no poll while the test waits.
    options: { concurrency: 1, batchSize: 64, notify: false, pollIntervalMs: 60_000 },
    handlers: { OrderCreated: handler },
  });
  const orderIds = rows.map((row) => row.partition_key);
  const historyRows = async () =>
    (
      await ctx.db
        .selectFrom('payment_history')
        .select(sql<string>`count(*)`.as('n'))
        .where('order_id', 'in', orderIds)
        .executeTakeFirstOrThrow()
    ).n;
  await pollUntil(async () => Number(await historyRows()) === orders, {
    timeoutMs: 20_000,
    description: 'every order applied',
  });
  await processor.stop();
  const events = await ctx.db
    .selectFrom('outbox_event')
    .select('event_type')
    .where('partition_key', 'in', orderIds)
    .execute();
  expect(events.filter((e) => e.event_type === 'PaymentFailed')).toHaveLength(1);
  expect(events.filter((e) => e.event_type === 'PaymentCompleted')).toHaveLength(orders - 1);
  // Claims that found nothing are the idle worker's, not the cost of these orders.
  return sent.filter((s) => !(s.text.includes('WITH head AS') && s.rows === 0)).length;
}

it('per event, a claim of OrderCreated costs five statements plus four per order', async () => {
  // The claim, BEGIN, the lock, the mark, COMMIT; per order a savepoint, the payment (its ON
  // CONFLICT says whether it is new), the outbox event, the history row.
  expect(await statementsForOneClaim(handleOrderCreated(gateway), 2)).toBe(5 + 4 * 2);
  expect(await statementsForOneClaim(handleOrderCreated(gateway), 16)).toBe(5 + 4 * 16);
});

it('in the batch form payment-service runs, a claim costs nine statements for any number of orders', async () => {
  // The per-event five, one savepoint, and the payments, outbox events and history by unnest.
  expect(await statementsForOneClaim(handleOrderCreatedBatch(gateway), 2)).toBe(9);
  expect(await statementsForOneClaim(handleOrderCreatedBatch(gateway), 16)).toBe(9);
});
