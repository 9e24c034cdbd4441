import { fileURLToPath } from 'node:url';
import {
  CreateOrderBody,
  IdempotencyHeaders,
  OrderView,
  insertOrderRow,
  orderRoles,
  orderService,
  toOrderView,
  type OrderDatabase,
  type OrderRole,
  type OrderServiceConfig,
} from '@outbox-inbox/order-service';
import {
  buildServiceApp,
  roleCommand,
  startServiceRoles,
  type Command,
  type ServiceDescriptor,
} from '@outbox-inbox/service-kit';

type AppDeps = Parameters<typeof buildServiceApp<OrderDatabase>>[0];

/**
 * order-service's api with `POST /orders` writing the order row alone: the same Fastify app,
 * validation, pool and serialisation as the shipped route, without the outbox row and its
 * NOTIFY. It breaks R-DIST-OBX-1 on purpose and exists only so B4 can price the outbox.
 */
export function buildAppWithoutOutbox(deps: AppDeps): ReturnType<typeof buildServiceApp> {
  return buildServiceApp({
    ...deps,
    // Registered like the shipped routes, so both pay for the same hooks.
    routes: (app) =>
      app.post<{ Body: CreateOrderBody }>(
        '/orders',
        {
          schema: {
            body: CreateOrderBody,
            headers: IdempotencyHeaders,
            response: { 201: OrderView },
          },
        },
        async (request, reply) => {
          const row = await deps.db
            .transaction()
            .execute((trx) => insertOrderRow(trx, request.body));
          return reply.code(201).send(toOrderView(row));
        },
      ),
  });
}

/** order-service as B4's variant runs it: the api role alone, with the app above. */
export const orderServiceWithoutOutbox: ServiceDescriptor<OrderRole, OrderServiceConfig> = {
  ...orderService,
  start: (options) =>
    startServiceRoles<'api', OrderDatabase, OrderServiceConfig>(
      {
        api: {
          kind: 'api',
          port: orderService.ports.api,
          summary: 'orders HTTP API without the outbox',
          access: orderRoles.api.access,
          app: ({ db, logger, registry }) => buildAppWithoutOutbox({ db, logger, registry }),
        },
      },
      { ...options, roles: ['api'] },
    ),
};

const entryPoint = fileURLToPath(new URL('./order-api-without-outbox.ts', import.meta.url));

/** How B4 starts the variant: like order-service's api process, from the entry point below. */
export function withoutOutboxCommand(): Command {
  return roleCommand(orderService, 'api', [entryPoint]);
}
