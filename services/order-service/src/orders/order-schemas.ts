import { Type, type Static } from '@sinclair/typebox';
import { orderStatuses } from '../database/schema.ts';

const uuid = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});
const status = Type.Union(orderStatuses.map((s) => Type.Literal(s)));
const paymentStatus = Type.Union([
  Type.Literal('PAID'),
  Type.Literal('FAILED'),
  Type.Literal('REFUNDED'),
  Type.Null(),
]);

export const CreateOrderBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 100 }),
    /** Integer minor units (cents): no floats for money. */
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217, upper case' }),
  },
  { additionalProperties: false },
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

export const OrderParams = Type.Object({ id: uuid }, { additionalProperties: false });

export const ListOrdersQuery = Type.Object(
  {
    status: Type.Optional(status),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    cursor: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' })),
  },
  { additionalProperties: false },
);
export type ListOrdersQuery = Static<typeof ListOrdersQuery>;

export const OrderView = Type.Object({
  id: Type.String(),
  customerId: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  status,
  paymentStatus,
  paymentId: Type.Union([Type.String(), Type.Null()]),
  failureReason: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export type OrderView = Static<typeof OrderView>;

/** One step of the order's journey: an event it emitted or applied, and its state after it. */
export const JourneyStep = Type.Object({
  eventId: Type.String(),
  eventType: Type.String(),
  status,
  paymentStatus,
  at: Type.String(),
});
export type JourneyStep = Static<typeof JourneyStep>;

/** `GET /orders/:id`: the order and its journey, oldest step first. */
export const OrderDetails = Type.Intersect([
  OrderView,
  Type.Object({ journey: Type.Array(JourneyStep) }),
]);
export type OrderDetails = Static<typeof OrderDetails>;

export const OrderPage = Type.Object({
  items: Type.Array(OrderView),
  /** Pass as `cursor` to get the next page; null on the last page. */
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
export type OrderPage = Static<typeof OrderPage>;
