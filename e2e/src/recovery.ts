import { pollUntil } from '@outbox-inbox/infra';
import type { System } from './system.ts';

/**
 * Waits until every order in `orderIds` (those accepted before a fault was cleared) reached
 * its final state, and returns the seconds since `clearedAt`: how long the system took to
 * work off what the fault held back.
 */
export async function secondsToRecover(
  system: System,
  orderIds: readonly string[],
  clearedAt: number,
  timeoutMs = 90_000,
): Promise<number> {
  await pollUntil(
    async () => {
      const { rows } = await system.orderDb.query<{ n: string }>(
        `SELECT count(*) AS n FROM orders
          WHERE id = ANY($1::uuid[])
            AND (status = 'PENDING' OR (status = 'CANCELLED'
              AND payment_status IS DISTINCT FROM 'REFUNDED'
              AND payment_status IS DISTINCT FROM 'FAILED'))`,
        [orderIds],
      );
      return Number(rows[0]?.n ?? 1) === 0;
    },
    { timeoutMs, intervalMs: 200, description: 'the orders held back by the fault to settle' },
  );
  return Math.round((Date.now() - clearedAt) / 100) / 10;
}
