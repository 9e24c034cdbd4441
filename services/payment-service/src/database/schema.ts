import type { OutboxTables } from '@outbox-inbox/outbox';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
/** int8 comes back from pg as a string. */
type Int8 = ColumnType<string, number | string, number | string>;

export const paymentStatuses = ['COMPLETED', 'FAILED', 'REFUNDED'] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

export interface PaymentsTable {
  id: string;
  /** UNIQUE: one payment per order, the last line of defence behind the inbox. */
  order_id: string;
  customer_id: string;
  amount: Int8;
  currency: string;
  status: PaymentStatus;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  refunded_at: NullableTimestamp;
}

/** What applying one order event did to the order's payment. */
export type PaymentOutcome = PaymentStatus | 'UNCHANGED';

/** One order event the processor applied, in the order applied. */
export interface PaymentHistoryTable {
  seq: Generated<string>;
  order_id: string;
  event_id: string;
  event_type: string;
  outcome: PaymentOutcome;
  applied_at: Timestamp;
}

export interface PaymentDatabase extends OutboxTables {
  payments: PaymentsTable;
  payment_history: PaymentHistoryTable;
}

export type PaymentRow = Selectable<PaymentsTable>;
export type NewPaymentRow = Insertable<PaymentsTable>;
