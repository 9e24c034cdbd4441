import { createDatabase } from '@outbox-inbox/service-kit';
import { createOutboxMetrics } from '@outbox-inbox/outbox/ops';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type OrderDatabase } from '../../src/index.ts';
import { countRows, createOrderApiContext, validOrder } from '../support/order-api-context.ts';

/** The answer bound the api documents: every request is answered or refused within it. */
const answerBoundMs = 1000;
const admission = { maxInFlight: 3, maxWaitMs: 200, retryAfterSeconds: 1 };
const poolSize = 5;

let databaseUrl: string;
let db: Kysely<OrderDatabase>;
let app: FastifyInstance;
let closeContext: () => Promise<void>;

beforeAll(async () => {
  const ctx = await createOrderApiContext();
  databaseUrl = ctx.databaseUrl;
  closeContext = () => ctx.close();
  // The services' own pool: the default connection wait, as a deployment runs it.
  const logger = pino({ level: 'silent' });
  db = createDatabase<OrderDatabase>({ url: databaseUrl, poolSize, logger });
  const registry = new Registry();
  createOutboxMetrics(registry, db);
  app = buildApp({ db, logger, registry, admission });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await db.destroy();
  await closeContext();
});

it('refuses what it cannot start within the admission wait, and at once what finds the queue full: 503 with Retry-After, within the bound, nothing written, readiness truthful', async () => {
  const before = await countRows(db);
  // Every order write blocks on this lock, holding its connection: the api at capacity.
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
  let released = false;
  try {
    const offered = 12;
    const answers = Array.from({ length: offered }, async () => {
      const sent = performance.now();
      const response = await app.inject({ method: 'POST', url: '/orders', payload: validOrder });
      return { response, ms: performance.now() - sent };
    });
    // The refused requests answer while the admitted ones still wait on the lock.
    const settled = await Promise.race([
      Promise.all(answers.slice(admission.maxInFlight)),
      new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 5 * answerBoundMs)),
    ]);
    expect(settled).not.toBe('held');
    if (settled === 'held') return;
    for (const { response, ms } of settled) {
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
      expect(response.json<{ detail: string }>().detail).toMatch(/at capacity/);
      expect(ms).toBeLessThan(answerBoundMs);
    }

    const ready = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({
      status: 'degraded',
      checks: { database: 'ok', admission: { status: 'refusing' } },
    });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    // As many waited as there are slots (maxWaiting unset), and ran out of time; the rest
    // found the queue full.
    const waited = admission.maxInFlight;
    expect(metrics.body).toContain(`http_requests_refused_total{reason="wait-exceeded"} ${waited}`);
    expect(metrics.body).toContain(
      `http_requests_refused_total{reason="queue-full"} ${offered - admission.maxInFlight - waited}`,
    );
    expect(metrics.body).toMatch(/^http_requests_in_flight 3$/m);

    await holder.query('COMMIT');
    released = true;
    const admitted = await Promise.all(answers.slice(0, admission.maxInFlight));
    expect(admitted.map(({ response }) => response.statusCode)).toEqual([201, 201, 201]);
    const after = await countRows(db);
    expect(after.orders - before.orders).toBe(admission.maxInFlight);
    expect(after.outbox - before.outbox).toBe(admission.maxInFlight);
  } finally {
    if (!released) await holder.query('ROLLBACK');
    await holder.end();
  }
});
