import { declaredRoutes, undocumentedRoutes } from '@outbox-inbox/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPaymentTestContext,
  type PaymentTestContext,
} from '../support/payment-test-context.ts';

let context: PaymentTestContext;
beforeAll(async () => {
  context = await createPaymentTestContext();
});
afterAll(async () => context?.close());

describe('payment-service API docs', () => {
  it('document every route, from the routes’ own schemas', async () => {
    const routes = declaredRoutes(context.app).map((r) => `${r.method} ${r.url}`);
    expect(routes).toEqual(
      expect.arrayContaining(['GET /payments', 'GET /payments/:id', 'GET /health/ready']),
    );
    expect(undocumentedRoutes(context.app)).toEqual([]);
    const document = (await context.app.inject('/docs/json')).json();
    expect(document.info.title).toBe('payment-service');
    const query = document.paths['/payments'].get.parameters.map((p: { name: string }) => p.name);
    expect(query).toContain('orderId');
  });

  it('serve a Swagger UI at /docs', async () => {
    const page = await context.app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });
});
