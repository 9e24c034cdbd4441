import { randomUUID } from 'node:crypto';
import type { ReceivedEvent } from '@outbox-inbox/outbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPaymentEvent, applyPaymentEvents, type OrderStatus } from '../../src/index.ts';
import { createOrderApiContext, type OrderApiContext } from '../support/order-api-context.ts';

let ctx: OrderApiContext;
beforeAll(async () => {
  ctx = await createOrderApiContext();
});
afterAll(async () => ctx.close());

const paymentId = randomUUID();

async function orderWith(status: OrderStatus): Promise<string> {
  const id = randomUUID();
  await ctx.db
    .insertInto('orders')
    .values({ id, customer_id: 'c', amount: 100, currency: 'EUR', status })
    .execute();
  return id;
}

function paymentEvent(
  eventType: string,
  orderId: string,
  extra: Record<string, unknown>,
): ReceivedEvent {
  return {
    eventId: randomUUID(),
    eventType,
    aggregateType: 'payment',
    aggregateId: paymentId,
    partitionKey: orderId,
    payload: { schemaVersion: 1, paymentId, orderId, amount: 100, currency: 'EUR', ...extra },
    occurredAt: new Date(),
    topic: 'payment.events',
    partition: 0,
    offset: '0',
    headers: {},
  };
}

const at = new Date().toISOString();
const completed = (orderId: string) =>
  paymentEvent('PaymentCompleted', orderId, { completedAt: at });
const failed = (orderId: string) =>
  paymentEvent('PaymentFailed', orderId, { reason: 'declined', failedAt: at });
const refunded = (orderId: string) => paymentEvent('PaymentRefunded', orderId, { refundedAt: at });

async function apply(event: ReceivedEvent) {
  await ctx.db.transaction().execute((trx) => applyPaymentEvent(trx, event));
  return ctx.db
    .selectFrom('orders')
    .select(['status', 'payment_status', 'failure_reason'])
    .where('id', '=', event.partitionKey)
    .executeTakeFirstOrThrow();
}

describe('applyPaymentEvent', () => {
  it('moves a PENDING order to PAID or PAYMENT_FAILED', async () => {
    expect(await apply(completed(await orderWith('PENDING')))).toMatchObject({
      status: 'PAID',
      payment_status: 'PAID',
    });
    expect(await apply(failed(await orderWith('PENDING')))).toEqual({
      status: 'PAYMENT_FAILED',
      payment_status: 'FAILED',
      failure_reason: 'declined',
    });
  });

  it('keeps a cancelled order cancelled and records its money: paid, then refunded, for good', async () => {
    const id = await orderWith('CANCELLED');
    expect(await apply(completed(id))).toMatchObject({
      status: 'CANCELLED',
      payment_status: 'PAID',
    });
    expect(await apply(refunded(id))).toMatchObject({
      status: 'CANCELLED',
      payment_status: 'REFUNDED',
    });
    // A PaymentCompleted replayed later (a new delivery of an old event) never undoes the refund.
    expect(await apply(completed(id))).toMatchObject({
      status: 'CANCELLED',
      payment_status: 'REFUNDED',
    });
  });

  it('records every applied event in the journey, also one that changed nothing', async () => {
    const id = await orderWith('CANCELLED');
    const paid = completed(id);
    await apply(paid);
    await apply(refunded(id));
    // The same event applied twice (what a broken dedup would do) shows as two steps.
    await apply(paid);
    const steps = await ctx.db
      .selectFrom('order_history')
      .select(['event_id', 'event_type', 'payment_status'])
      .where('order_id', '=', id)
      .orderBy('seq')
      .execute();
    expect(steps.map((step) => [step.event_type, step.payment_status])).toEqual([
      ['PaymentCompleted', 'PAID'],
      ['PaymentRefunded', 'REFUNDED'],
      ['PaymentCompleted', 'REFUNDED'],
    ]);
    expect(steps.filter((step) => step.event_id === paid.eventId)).toHaveLength(2);
  });

  it('ignores events of other types and of unknown orders', async () => {
    const id = await orderWith('PENDING');
    expect(await apply({ ...completed(id), eventType: 'PaymentAuthorized' })).toMatchObject({
      status: 'PENDING',
    });
    await ctx.db.transaction().execute((trx) => applyPaymentEvent(trx, completed(randomUUID())));
  });
});

describe('applyPaymentEvents', () => {
  /** An order's journey, every rule in it: paid, a replay, refunded, a replay after the refund. */
  function journey(cancelled: string, pending: string, failing: string): ReceivedEvent[] {
    const paid = completed(cancelled);
    return [
      paid,
      completed(pending),
      failed(failing),
      { ...completed(pending), eventType: 'PaymentAuthorized' },
      completed(randomUUID()),
      paid,
      refunded(cancelled),
      { ...paid, eventId: randomUUID() },
    ];
  }

  async function stateOf(ids: readonly string[]) {
    return Promise.all(
      ids.map(async (id) => ({
        order: await ctx.db
          .selectFrom('orders')
          .select(['status', 'payment_status', 'failure_reason'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow(),
        steps: await ctx.db
          .selectFrom('order_history')
          .select(['event_type', 'status', 'payment_status'])
          .where('order_id', '=', id)
          .orderBy('seq')
          .execute(),
      })),
    );
  }

  it('ends a set of events as applyPaymentEvent does one by one, with three statements', async () => {
    const one = [
      await orderWith('CANCELLED'),
      await orderWith('PENDING'),
      await orderWith('PENDING'),
    ] as const;
    const set = [
      await orderWith('CANCELLED'),
      await orderWith('PENDING'),
      await orderWith('PENDING'),
    ] as const;
    for (const event of journey(...one)) {
      await ctx.db.transaction().execute((trx) => applyPaymentEvent(trx, event));
    }
    let statements = 0;
    await ctx.db.transaction().execute((trx) =>
      applyPaymentEvents(
        trx.withPlugin({
          transformQuery: (args) => {
            statements += 1;
            return args.node;
          },
          transformResult: async (args) => args.result,
        }),
        journey(...set),
      ),
    );
    expect(await stateOf(set)).toEqual(await stateOf(one));
    expect((await stateOf(set))[0]?.order).toMatchObject({
      status: 'CANCELLED',
      payment_status: 'REFUNDED',
    });
    expect(statements).toBe(3);
  });
});
