import { Type, type Static } from '@sinclair/typebox';
import { paymentStatuses } from '../database/schema.ts';

const uuid = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});

export const PaymentParams = Type.Object({ id: uuid }, { additionalProperties: false });

export const ListPaymentsQuery = Type.Object(
  {
    orderId: Type.Optional(uuid),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);
export type ListPaymentsQuery = Static<typeof ListPaymentsQuery>;

export const PaymentView = Type.Object({
  id: Type.String(),
  orderId: Type.String(),
  customerId: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status: Type.Union(paymentStatuses.map((s) => Type.Literal(s))),
  failureReason: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  refundedAt: Type.Union([Type.String(), Type.Null()]),
});
export type PaymentView = Static<typeof PaymentView>;

export const PaymentList = Type.Object({ items: Type.Array(PaymentView) });
