import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildServiceApp } from './build-service-app.ts';

// The routes below never reach the database; the app only needs a handle for /health.
const db = new Kysely<object>({
  dialect: new PostgresDialect({
    pool: new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none' }),
  }),
});
let app: FastifyInstance;
const received: unknown[] = [];
beforeAll(async () => {
  app = buildServiceApp({ db, logger: pino({ level: 'silent' }), registry: new Registry() });
  app.get<{ Querystring: { q: string } }>(
    '/search',
    { schema: { querystring: { type: 'object', properties: { q: { type: 'string' } } } } },
    async (request) => {
      received.push(request.query.q);
      return { ok: true };
    },
  );
  app.post('/notes/:name', async (request) => {
    received.push(request.body);
    return { ok: true };
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await db.destroy();
});

describe('text PostgreSQL cannot store', () => {
  it('is a 400 naming the field, on any route, wherever it is', async () => {
    const query = await app.inject({ method: 'GET', url: '/search?q=a%00b' });
    expect(query.statusCode).toBe(400);
    expect(query.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(query.json()).toMatchObject({
      status: 400,
      title: 'Bad Request',
      errors: [{ field: 'q', in: 'querystring', reason: expect.stringContaining('U+0000') }],
    });

    const nested = await app.inject({
      method: 'POST',
      url: '/notes/n%00',
      payload: { lines: ['fine', 'bad\ud83d'], ['k\u0000']: 1 },
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().errors).toEqual([
      { field: 'name', in: 'params', reason: expect.stringContaining('U+0000') },
      { field: 'lines.1', in: 'body', reason: expect.stringContaining('lone UTF-16 surrogate') },
      { field: 'k\\u0000', in: 'body', reason: expect.stringMatching(/^name contains U\+0000/) },
    ]);
    expect(nested.json().detail).toContain('lines.1 contains a lone UTF-16 surrogate');
    expect(received).toEqual([]);
  });

  it('lets every other string through, emoji and all', async () => {
    received.length = 0;
    const fine = await app.inject({
      method: 'POST',
      url: '/notes/n',
      payload: { text: 'café 🍕 \u00a0 tab\tnewline\n' },
    });
    expect(fine.statusCode).toBe(200);
    expect(received).toEqual([{ text: 'café 🍕 \u00a0 tab\tnewline\n' }]);
  });
});
