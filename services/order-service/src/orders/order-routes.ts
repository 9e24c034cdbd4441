import { createOutboxNotifier } from '@outbox-inbox/outbox';
import { notFound, deadlinesOf } from '@outbox-inbox/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { OrderDatabase } from '../database/schema.ts';
import { cancelOrder } from './cancel-order.ts';
import { listOrders } from './list-orders.ts';
import { OrderGroupCommit } from './order-group-commit.ts';
import {
  CreateOrderBody,
  IdempotencyHeaders,
  ListOrdersQuery,
  OrderDetails,
  OrderPage,
  OrderParams,
  OrderView,
} from './order-schemas.ts';
import { toOrderView } from './order-view.ts';
import { readOrderJourney } from '../history/read-order-journey.ts';

export function registerOrderRoutes(
  app: FastifyInstance,
  deps: { db: Kysely<OrderDatabase> },
): void {
  const { db } = deps;
  // createOrder enqueues without a NOTIFY in its transaction; this wakes the relays after it.
  const relays = createOutboxNotifier(db, app.log);
  app.addHook('onClose', () => relays.idle());
  // Concurrent requests share a transaction; each is answered after its commit.
  const orders = new OrderGroupCommit(db);

  app.post<{ Body: CreateOrderBody; Headers: { 'idempotency-key'?: string } }>(
    '/orders',
    {
      schema: { body: CreateOrderBody, headers: IdempotencyHeaders, response: { 201: OrderView } },
    },
    async (request, reply) => {
      const result = await orders.create(
        {
          body: request.body,
          idempotencyKey: request.headers['idempotency-key'],
          trace: request.traceContext,
        },
        deadlinesOf(request),
      );
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      else relays.notify();
      return reply.code(result.status).send(result.body);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/orders/:id/cancel',
    { schema: { params: OrderParams, response: { 200: OrderView } } },
    async (request) => {
      const order = await cancelOrder(db, request.params.id, request.traceContext);
      if (!order) throw notFound('order', request.params.id);
      return toOrderView(order);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/orders/:id',
    { schema: { params: OrderParams, response: { 200: OrderDetails } } },
    async (request) => {
      const order = await db
        .selectFrom('orders')
        .selectAll()
        .where('id', '=', request.params.id)
        .executeTakeFirst();
      if (!order) throw notFound('order', request.params.id);
      return { ...toOrderView(order), journey: await readOrderJourney(db, order.id) };
    },
  );

  app.get<{ Querystring: ListOrdersQuery }>(
    '/orders',
    { schema: { querystring: ListOrdersQuery, response: { 200: OrderPage } } },
    async (request) => listOrders(db, request.query),
  );
}
