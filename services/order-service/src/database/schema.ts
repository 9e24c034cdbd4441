import type { OutboxTables } from '@outbox-inbox/outbox';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** int8 comes back from pg as a string. */
type Int8 = ColumnType<string, number | string, number | string>;

export const orderStatuses = ['PENDING', 'PAID', 'PAYMENT_FAILED', 'CANCELLED'] as const;
export type OrderStatus = (typeof orderStatuses)[number];

/** What payment-service last reported for the order. */
export type PaymentStatus = 'PAID' | 'FAILED' | 'REFUNDED';

export interface OrdersTable {
  id: string;
  /** Insertion order: the keyset of `GET /orders` (a uuid has no useful order). */
  seq: Generated<string>;
  customer_id: string;
  amount: Int8;
  currency: string;
  status: OrderStatus;
  payment_status: PaymentStatus | null;
  payment_id: string | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One row per Idempotency-Key: the request it was first used with and the response sent. */
export interface IdempotencyKeyTable {
  key: string;
  request_hash: string;
  response_status: number | null;
  response_body: ColumnType<unknown, string | undefined, string>;
  created_at: Timestamp;
}

/** One step of an order's journey: an event it emitted or applied, and the state after it. */
export interface OrderHistoryTable {
  seq: Generated<string>;
  order_id: string;
  event_id: string;
  event_type: string;
  status: OrderStatus;
  payment_status: PaymentStatus | null;
  recorded_at: Timestamp;
}

export interface OrderDatabase extends OutboxTables {
  orders: OrdersTable;
  idempotency_key: IdempotencyKeyTable;
  order_history: OrderHistoryTable;
}

export type OrderRow = Selectable<OrdersTable>;
export type NewOrderRow = Insertable<OrdersTable>;
