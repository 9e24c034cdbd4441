import { declaredRoutes, undocumentedRoutes } from '@outbox-inbox/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrderApiContext, type OrderApiContext } from '../support/order-api-context.ts';

let context: OrderApiContext;
beforeAll(async () => {
  context = await createOrderApiContext();
});
afterAll(async () => context?.close());

describe('order-service API docs', () => {
  it('document every route, from the routes’ own schemas', async () => {
    const routes = declaredRoutes(context.app).map((r) => `${r.method} ${r.url}`);
    expect(routes).toEqual(
      expect.arrayContaining(['POST /orders', 'GET /orders/:id', 'POST /orders/:id/cancel']),
    );
    expect(undocumentedRoutes(context.app)).toEqual([]);
    const document = (await context.app.inject('/docs/json')).json();
    expect(document.info.title).toBe('order-service');
    const body = document.paths['/orders'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['customerId', 'amount', 'currency']);
  });

  it('serve a Swagger UI at /docs', async () => {
    const page = await context.app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });
});
