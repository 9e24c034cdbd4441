import { pollUntil } from '@outbox-inbox/infra';
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
/**
 * The tests below hold requests on a lock and release it by hand, however slow the machine: an
 * answer deadline far away keeps the held groups committing. The last test sets its own.
 */
const admission = { maxInFlight: 3, maxWaitMs: 200, retryAfterSeconds: 1, answerWithinMs: 30_000 };
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

/** A session holding orders locked in a transaction: every order write waits on it. */
async function lockOrders(): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
  return holder;
}

it('refuses what it cannot start within the admission wait, and at once what finds the queue full: 503 with Retry-After, within the bound, nothing written, readiness truthful', async () => {
  const before = await countRows(db);
  // Every order write blocks on this lock, holding its connection: the api at capacity.
  const holder = await lockOrders();
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

it('refuses, once the admission wait has passed, a request that was admitted but waited behind busy groups: 503 with Retry-After, nothing written, counted as start-deadline', async () => {
  const before = await countRows(db);
  const holder = await lockOrders();
  const waitingOnTheLock = async (): Promise<number> => {
    const { rows } = await holder.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_locks WHERE relation = 'orders'::regclass AND NOT granted`,
    );
    return Number(rows[0]?.n);
  };
  let released = false;
  try {
    // Two groups under way, one order each (the group commit runs two at a time), both held on
    // the lock: a third admitted request can only wait for one of them to end.
    const held = [];
    for (const groups of [1, 2]) {
      held.push(app.inject({ method: 'POST', url: '/orders', payload: validOrder }));
      await pollUntil(async () => (await waitingOnTheLock()) === groups, {
        timeoutMs: 10_000,
        description: `group ${groups} waiting on the lock`,
      });
    }
    const sent = performance.now();
    const late = await Promise.race([
      app.inject({ method: 'POST', url: '/orders', payload: validOrder }),
      new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 5 * answerBoundMs)),
    ]);
    const ms = performance.now() - sent;
    expect(late, 'an answer while both groups still wait on the lock').not.toBe('held');
    if (late === 'held') return;
    expect(late.statusCode).toBe(503);
    expect(late.headers['retry-after']).toBe('1');
    expect(late.json<{ detail: string }>().detail).toMatch(/at capacity.*nothing was written/);
    // Refused at the end of the admission wait, not when a group ended (none has).
    expect(ms).toBeGreaterThanOrEqual(admission.maxWaitMs - 5);
    expect(ms).toBeLessThan(answerBoundMs);
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('http_requests_refused_total{reason="start-deadline"} 1');

    await holder.query('COMMIT');
    released = true;
    expect((await Promise.all(held)).map((response) => response.statusCode)).toEqual([201, 201]);
    const after = await countRows(db);
    expect(after.orders - before.orders).toBe(2);
    expect(after.outbox - before.outbox).toBe(2);
  } finally {
    if (!released) await holder.query('ROLLBACK');
    await holder.end();
  }
});

it('rolls back, rather than answer late, a group that could not send its COMMIT in time: 503 with Retry-After, nothing written, counted as answer-deadline', async () => {
  const answerWithinMs = 600;
  const registry = new Registry();
  const bounded = buildApp({
    db,
    logger: pino({ level: 'silent' }),
    registry,
    admission: { ...admission, answerWithinMs },
  });
  await bounded.ready();
  const before = await countRows(db);
  const holder = await lockOrders();
  let released = false;
  try {
    const sent = performance.now();
    const answer = bounded.inject({ method: 'POST', url: '/orders', payload: validOrder });
    // Its group started at once and sent its INSERT, which waits on the lock until the group's
    // statements were due (the bound less the group commit's reserve for the COMMIT).
    await pollUntil(
      async () => {
        const { rows } = await holder.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks WHERE relation = 'orders'::regclass AND NOT granted`,
        );
        return Number(rows[0]?.n) === 1 && performance.now() - sent > answerWithinMs;
      },
      { timeoutMs: 10_000, description: 'the group on the lock past its answer bound' },
    );
    await holder.query('COMMIT');
    released = true;
    const response = await answer;
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json<{ detail: string }>().detail).toMatch(
      /at capacity and could not finish this request in time; nothing was written/,
    );
    const metrics = await bounded.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toContain('http_requests_refused_total{reason="answer-deadline"} 1');
    expect(await countRows(db)).toEqual(before);
  } finally {
    if (!released) await holder.query('ROLLBACK');
    await holder.end();
    await bounded.close();
  }
});
