/**
 * Kafka topics of the system. Every event is keyed by its order id, so all events of one order
 * land on one partition and are consumed in the order they were produced.
 */
export const topics = Object.freeze({
  orderEvents: 'order.events',
  paymentEvents: 'payment.events',
} as const);

export type Topic = (typeof topics)[keyof typeof topics];
