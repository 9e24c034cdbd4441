import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { OrderDatabase, OrderRow } from '../database/schema.ts';
import type { CreateOrderBody } from './order-schemas.ts';

/** Inserts a PENDING order in the caller's transaction, which must also enqueue its event. */
export async function insertOrderRow(
  trx: Transaction<OrderDatabase>,
  body: CreateOrderBody,
): Promise<OrderRow> {
  return trx
    .insertInto('orders')
    .values({
      id: randomUUID(),
      customer_id: body.customerId,
      amount: body.amount,
      currency: body.currency,
      status: 'PENDING',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
