import type { Kysely } from 'kysely';
import type { OrderDatabase } from '../database/schema.ts';
import type { JourneyStep } from '../orders/order-schemas.ts';

/** The order's journey, oldest step first. */
export async function readOrderJourney(
  db: Kysely<OrderDatabase>,
  orderId: string,
): Promise<JourneyStep[]> {
  const rows = await db
    .selectFrom('order_history')
    .select(['event_id', 'event_type', 'status', 'payment_status', 'recorded_at'])
    .where('order_id', '=', orderId)
    .orderBy('seq')
    .execute();
  return rows.map((row) => ({
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    paymentStatus: row.payment_status,
    at: row.recorded_at.toISOString(),
  }));
}
