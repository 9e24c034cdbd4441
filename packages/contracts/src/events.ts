import { Type, type Static, type TObject } from '@sinclair/typebox';

/**
 * Version of the payload shapes below. A breaking change to a payload gets a new version and a
 * new schema beside the old one; consumers reject versions they do not know instead of guessing.
 */
export const schemaVersion = 1;

const uuid = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});
const timestamp = Type.String({ minLength: 20, maxLength: 40, description: 'ISO 8601 instant' });
/** Money is an integer number of minor units (cents) in an ISO 4217 currency: no floats. */
const amount = Type.Integer({ minimum: 1, maximum: 1_000_000_000_000 });
const currency = Type.String({ pattern: '^[A-Z]{3}$' });
const version = Type.Literal(schemaVersion);

// Tolerant reader: unknown fields are allowed, so a producer can add an optional field without
// a lock-step deploy of every consumer. Removing or retyping a field needs a new schemaVersion.
const options = { additionalProperties: true } as const;

export const OrderCreated = Type.Object(
  {
    schemaVersion: version,
    orderId: uuid,
    customerId: Type.String({ minLength: 1 }),
    amount,
    currency,
    createdAt: timestamp,
  },
  { ...options, $id: 'OrderCreated' },
);
export const OrderCancelled = Type.Object(
  { schemaVersion: version, orderId: uuid, cancelledAt: timestamp },
  { ...options, $id: 'OrderCancelled' },
);
export const PaymentCompleted = Type.Object(
  {
    schemaVersion: version,
    paymentId: uuid,
    orderId: uuid,
    amount,
    currency,
    completedAt: timestamp,
  },
  { ...options, $id: 'PaymentCompleted' },
);
export const PaymentFailed = Type.Object(
  {
    schemaVersion: version,
    paymentId: uuid,
    orderId: uuid,
    amount,
    currency,
    reason: Type.String({ minLength: 1 }),
    failedAt: timestamp,
  },
  { ...options, $id: 'PaymentFailed' },
);
export const PaymentRefunded = Type.Object(
  {
    schemaVersion: version,
    paymentId: uuid,
    orderId: uuid,
    amount,
    currency,
    refundedAt: timestamp,
  },
  { ...options, $id: 'PaymentRefunded' },
);

export type OrderCreated = Static<typeof OrderCreated>;
export type OrderCancelled = Static<typeof OrderCancelled>;
export type PaymentCompleted = Static<typeof PaymentCompleted>;
export type PaymentFailed = Static<typeof PaymentFailed>;
export type PaymentRefunded = Static<typeof PaymentRefunded>;

/** Every event type by name: the `eventType` column of the outbox and the inbox. */
export const eventSchemas = Object.freeze({
  OrderCreated,
  OrderCancelled,
  PaymentCompleted,
  PaymentFailed,
  PaymentRefunded,
} satisfies Record<string, TObject>);

export type EventType = keyof typeof eventSchemas;

export interface EventPayloads {
  OrderCreated: OrderCreated;
  OrderCancelled: OrderCancelled;
  PaymentCompleted: PaymentCompleted;
  PaymentFailed: PaymentFailed;
  PaymentRefunded: PaymentRefunded;
}

export const orderEventTypes = Object.freeze(['OrderCreated', 'OrderCancelled'] as const);
export const paymentEventTypes = Object.freeze([
  'PaymentCompleted',
  'PaymentFailed',
  'PaymentRefunded',
] as const);

/** `aggregateType` of the outbox rows each service writes. */
export const aggregateTypes = Object.freeze({ order: 'order', payment: 'payment' } as const);

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(eventSchemas, value);
}
