import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { pollUntil, urlAsLogin } from '@outbox-inbox/infra';
import { createDatabase } from '@outbox-inbox/service-kit';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApp, type OrderDatabase } from '../../src/index.ts';
import {
  countRows,
  createOrderApiContext,
  validOrder,
  type OrderApiContext,
} from '../support/order-api-context.ts';

let ctx: OrderApiContext;
beforeAll(async () => {
  ctx = await createOrderApiContext();
});
afterAll(async () => {
  // Leave the shared servers running for the next test file, whatever happened here.
  if (!ctx.stack.isRunning('postgres')) await ctx.stack.start('postgres');
  if (!ctx.stack.isRunning('kafka')) await ctx.stack.start('kafka');
  await ctx.close();
});

describe('health and metrics', () => {
  it('is live and ready, and serves Prometheus metrics including the outbox backlog', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
    const ready = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', admission: { status: 'ok' } },
    });
    await ctx.app.inject({ method: 'POST', url: '/orders', payload: validOrder });
    const metrics = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/^outbox_unpublished_events \d+/m);
    expect(metrics.body).toContain(
      'http_requests_total{method="POST",route="/orders",status="201"}',
    );
  });
});

describe('outages', () => {
  it('keeps accepting orders while Kafka is down: the outbox holds them', async () => {
    await ctx.stack.kill('kafka');
    const ready = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    const created = await ctx.app.inject({ method: 'POST', url: '/orders', payload: validOrder });
    expect(created.statusCode).toBe(201);
    await ctx.stack.start('kafka');
  });

  it('answers 503 without internals while PostgreSQL is down, and recovers', async () => {
    const before = await countRows(ctx.db);
    await ctx.stack.kill('postgres');

    const write = await ctx.app.inject({ method: 'POST', url: '/orders', payload: validOrder });
    expect(write.statusCode).toBe(503);
    expect(write.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(write.headers['retry-after']).toBeDefined();
    expect(write.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(write.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres|stack/i);

    const read = await ctx.app.inject({ method: 'GET', url: '/orders' });
    expect(read.statusCode).toBe(503);
    const ready = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect((await ctx.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);

    await ctx.stack.start('postgres');
    await pollUntil(
      async () =>
        (await ctx.app.inject({ method: 'GET', url: '/health/ready' })).statusCode === 200,
      { timeoutMs: 30_000, description: 'readiness after PostgreSQL restarts' },
    );
    const after = await ctx.app.inject({ method: 'POST', url: '/orders', payload: validOrder });
    expect(after.statusCode).toBe(201);
    expect(await countRows(ctx.db)).toEqual({
      orders: before.orders + 1,
      outbox: before.outbox + 1,
    });
  });
});

describe('a refused login', () => {
  it('makes readiness 503 with the server\'s reason, not "unreachable"', async () => {
    const login = `no-such-login-${randomUUID().slice(0, 8)}`;
    const logger = pino({ level: 'silent' });
    const db = createDatabase<OrderDatabase>({
      url: urlAsLogin(ctx.databaseUrl, login),
      poolSize: 2,
      logger,
    });
    const app = buildApp({ db, logger, registry: new Registry() });
    try {
      const ready = await app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      const body = ready.json<{ checks: { database: { status: string; reason: string } } }>();
      expect(body.checks.database.status).toBe('login-refused');
      expect(body.checks.database.reason).toContain(`role "${login}" does not exist`);
    } finally {
      await app.close();
      await db.destroy();
    }
  });
});
