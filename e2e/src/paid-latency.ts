import type pg from 'pg';

/** Commit → PAID of the orders created in a window: what a customer waits for a payment. */
export interface PaidLatency {
  readonly orders: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/**
 * Percentiles of `updated_at - created_at` over the orders created in [from, to) that ended
 * PAID and stayed so (a cancelled one's `updated_at` is its cancel): order-service commits the
 * order at `created_at` and sets PAID as it applies the payment's event.
 */
export async function paidLatency(orderDb: pg.Pool, from: Date, to: Date): Promise<PaidLatency> {
  const { rows } = await orderDb.query<{ orders: number; p50: number | null; p99: number | null }>(
    `SELECT count(*)::int AS orders,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
       FROM (SELECT extract(epoch FROM updated_at - created_at) * 1000 AS ms
               FROM orders
              WHERE status = 'PAID' AND created_at >= $1 AND created_at < $2) AS paid`,
    [from, to],
  );
  const row = rows[0];
  return {
    orders: row?.orders ?? 0,
    p50Ms: Math.round(row?.p50 ?? 0),
    p99Ms: Math.round(row?.p99 ?? 0),
  };
}

/** `commit → PAID p50 212 ms, p99 904 ms (500 orders)`: for the report's notes. */
export function describePaidLatency(latency: PaidLatency): string {
  return `commit → PAID p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms (${latency.orders} orders)`;
}
