import { notFound } from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { PaymentDatabase } from '../database/schema.ts';
import { ListPaymentsQuery, PaymentList, PaymentParams, PaymentView } from './payment-schemas.ts';
import { toPaymentView } from './payment-view.ts';

/** Read-only: payments are created by the inbox processor, never over HTTP. */
export function registerPaymentRoutes(
  app: FastifyInstance,
  deps: { db: Kysely<PaymentDatabase> },
): void {
  const { db } = deps;

  app.get<{ Params: { id: string } }>(
    '/payments/:id',
    { schema: { params: PaymentParams, response: { 200: PaymentView } } },
    async (request) => {
      const payment = await db
        .selectFrom('payments')
        .selectAll()
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (!payment) throw notFound('payment', request.params.id);
      return toPaymentView(payment);
    },
  );

  app.get<{ Querystring: ListPaymentsQuery }>(
    '/payments',
    { schema: { querystring: ListPaymentsQuery, response: { 200: PaymentList } } },
    async (request) => {
      let select = db
        .selectFrom('payments')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(request.query.limit);
      if (request.query.orderId !== undefined)
        select = select.where('order_id', '=', request.query.orderId);
      return { items: (await select.execute()).map(toPaymentView) };
    },
  );
}
