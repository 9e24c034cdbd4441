import { pollUntil } from '@outbox-inbox/infra';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrderApiContext,
  validOrder,
  type OrderApiContext,
} from '../support/order-api-context.ts';

// A file of its own: the mutation that answers before the COMMIT runs only this test.
let ctx: OrderApiContext;
beforeAll(async () => {
  ctx = await createOrderApiContext();
});
afterAll(async () => ctx.close());

const post = (payload: object) => ctx.app.inject({ method: 'POST', url: '/orders', payload });

describe('POST /orders group commit', () => {
  it('answers only after the commit: an order whose COMMIT is held is neither answered nor visible', async () => {
    // A deferred trigger runs inside COMMIT; this one waits for an advisory lock the test holds,
    // so the group's COMMIT (not any statement before it) cannot finish until the test lets go.
    await sql`
      CREATE FUNCTION wait_for_commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.customer_id = 'held-at-commit' THEN
          PERFORM pg_advisory_xact_lock_shared(4242);
        END IF;
        RETURN NULL;
      END $$`.execute(ctx.db);
    await sql`CREATE CONSTRAINT TRIGGER commit_gate AFTER INSERT ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION wait_for_commit_gate()`.execute(
      ctx.db,
    );
    const gate = new pg.Client({ connectionString: ctx.databaseUrl });
    await gate.connect();
    try {
      await gate.query('SELECT pg_advisory_lock(4242)');
      let answered = false;
      const response = post({ ...validOrder, customerId: 'held-at-commit' }).then((r) => {
        answered = true;
        return r;
      });
      await pollUntil(
        async () => {
          const { rows } = await gate.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND NOT granted`,
          );
          return Number(rows[0]?.n) > 0;
        },
        { timeoutMs: 10_000, description: "the group's COMMIT to wait at the gate" },
      );
      expect(answered).toBe(false);
      const visible = await ctx.db
        .selectFrom('orders')
        .select('id')
        .where('customer_id', '=', 'held-at-commit')
        .execute();
      expect(visible).toEqual([]);
      await gate.query('SELECT pg_advisory_unlock(4242)');
      const created = await response;
      expect(created.statusCode).toBe(201);
      const order = await ctx.db
        .selectFrom('orders')
        .select('customer_id')
        .where('id', '=', created.json<{ id: string }>().id)
        .executeTakeFirst();
      expect(order?.customer_id).toBe('held-at-commit');
    } finally {
      await gate.end();
      await sql`DROP TRIGGER commit_gate ON orders`.execute(ctx.db);
      await sql`DROP FUNCTION wait_for_commit_gate()`.execute(ctx.db);
    }
  });
});
