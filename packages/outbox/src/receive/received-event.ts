/** A Kafka message parsed into an event (key = partition key, value = JSON payload, headers). */
export interface ReceivedEvent {
  readonly eventId: string;
  readonly eventType: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly partitionKey: string;
  readonly payload: unknown;
  readonly occurredAt: Date;
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset (int64, kept as a string). */
  readonly offset: string;
  /** Every header as a UTF-8 string, including the ones parsed above and e.g. `traceparent`. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Returns a reason to park the event, or undefined to accept it. */
export type EventValidator = (event: ReceivedEvent) => string | undefined;
