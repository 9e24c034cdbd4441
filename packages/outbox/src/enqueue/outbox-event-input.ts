/** What a write handler hands to `enqueue`. */
export interface OutboxEventInput {
  /** Defaults to a fresh UUID v7 (time-ordered, so the unique index stays append-mostly). */
  readonly eventId?: string;
  readonly eventType: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly topic: string;
  /** Kafka message key: events with the same key are published in enqueue order. */
  readonly partitionKey: string;
  /** Any JSON-serialisable value; published as the Kafka message value. */
  readonly payload: unknown;
  /** Extra Kafka headers, e.g. `{ traceparent }`. */
  readonly headers?: Readonly<Record<string, string>>;
}
