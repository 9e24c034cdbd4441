import type pg from 'pg';

/** The order outcomes that mean the pipeline carried an order all the way back (PAID or declined). */
const outcome = `event_type IN ('PaymentCompleted', 'PaymentFailed')`;

/** PostgreSQL's clock, epoch ms: the times below are compared with the rows' own. */
export async function databaseNow(orders: pg.Pool): Promise<number> {
  const { rows } = await orders.query<{ ms: number }>(
    'SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS ms',
  );
  return rows[0]?.ms ?? Number.NaN;
}

/** Orders whose payment outcome reached order-service in [from, to) (epoch ms). */
export async function ordersCarried(orders: pg.Pool, from: number, to: number): Promise<number> {
  const { rows } = await orders.query<{ n: number }>(
    `SELECT count(DISTINCT order_id)::int AS n FROM order_history
      WHERE ${outcome} AND recorded_at >= to_timestamp($1 / 1000.0) AND recorded_at < to_timestamp($2 / 1000.0)`,
    [from, to],
  );
  return rows[0]?.n ?? 0;
}

/** Orders committed and not yet carried back: what the pipeline still has to drain. */
export async function ordersInPipeline(orders: pg.Pool): Promise<number> {
  const { rows } = await orders.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM orders o
      WHERE NOT EXISTS (SELECT 1 FROM order_history h WHERE h.order_id = o.id AND ${outcome})
        AND o.status = 'PENDING'`,
  );
  return rows[0]?.n ?? 0;
}

/** Commit → payment outcome (ms) of each order committed in [from, to) (epoch ms). */
export async function commitToOutcomeMs(
  orders: pg.Pool,
  from: number,
  to: number,
): Promise<number[]> {
  const { rows } = await orders.query<{ ms: number }>(
    `SELECT extract(epoch FROM min(h.recorded_at) - o.created_at)::float8 * 1000 AS ms
       FROM orders o JOIN order_history h ON h.order_id = o.id AND h.${outcome}
      WHERE o.created_at >= to_timestamp($1 / 1000.0) AND o.created_at < to_timestamp($2 / 1000.0)
      GROUP BY o.id, o.created_at`,
    [from, to],
  );
  return rows.map((row) => row.ms);
}

/** The p-th percentile (nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
