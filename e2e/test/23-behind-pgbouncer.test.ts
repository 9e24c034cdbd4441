import { pollUntil } from '@outbox-inbox/infra';
import type pg from 'pg';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { describePaidLatency, paidLatency, type PaidLatency } from '../src/paid-latency.ts';
import { metricTotal, scrapeMetrics } from '../src/role-probes.ts';
import { runScenario, traffic } from '../src/scenario.ts';
import type { System } from '../src/system.ts';

/** Seconds of load, nothing broken, over which commit → PAID is measured behind the pooler. */
const calmSeconds = 20;
/** The roles that LISTEN: each wakes on its NOTIFY, or waits for its next poll. */
const listeners = ['order-relay', 'payment-processor', 'payment-relay'] as const;

async function databaseNow(db: pg.Pool): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return rows[0]?.now ?? new Date();
}

/** Every order created in [from, to) has left PENDING: the window's latencies are all in. */
async function untilWindowSettled(db: pg.Pool, from: Date, to: Date): Promise<void> {
  await pollUntil(
    async () => {
      const { rows } = await db.query<{ pending: number }>(
        `SELECT count(*)::int AS pending FROM orders
          WHERE status = 'PENDING' AND created_at >= $1 AND created_at < $2`,
        [from, to],
      );
      return rows[0]?.pending === 0;
    },
    { timeoutMs: 30_000, intervalMs: 200, description: "the calm phase's orders to settle" },
  );
}

/** NOTIFYs each listening role has received so far (`outbox_listen_notifications_total`). */
async function notificationsHeard(system: System): Promise<Record<string, number>> {
  const heard: Record<string, number> = {};
  for (const name of listeners) {
    const role = system.roles.find((candidate) => candidate.name === name);
    const text = role === undefined ? undefined : await scrapeMetrics(role);
    heard[name] = text === undefined ? -1 : metricTotal(text, 'outbox_listen_notifications_total');
  }
  return heard;
}

it('every role behind PgBouncer in transaction mode (nothing prepared, LISTEN on a direct session): each LISTEN hears its NOTIFYs, commit → PAID measured, and PgBouncer killed under load loses and doubles nothing', async () => {
  let calm: PaidLatency | undefined;
  let heard: Record<string, number> = {};
  const result = await runScenario('23 behind pgbouncer', {
    system: { pooler: 'pgbouncer' },
    inject: async (context) => {
      const { system } = context;
      const from = await databaseNow(system.orderDb);
      await traffic(context, calmSeconds);
      const to = await databaseNow(system.orderDb);
      await untilWindowSettled(system.orderDb, from, to);
      calm = await paidLatency(system.orderDb, from, to);
      heard = await notificationsHeard(system);
      context.note(`behind PgBouncer, no fault: ${describePaidLatency(calm)}`);
      // Every role loses its pooled connections at once, in whatever transaction it was.
      await context.kill('pgbouncer');
      await system.stack.start('pgbouncer');
      context.fault('pgbouncer started again');
      await traffic(context, 5);
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.kills).toEqual({ pgbouncer: 1 });
  expect(result.unexpectedRestarts).toEqual([]);
  expect(calm?.orders).toBeGreaterThan(calmSeconds * 5);
  // Through the pooler a LISTEN hears nothing, and every hop waits for its poll instead.
  for (const role of listeners) expect(heard[role], role).toBeGreaterThan(calmSeconds);
});
