export type OutboxErrorCode =
  | 'NOT_A_TRANSACTION'
  | 'INVALID_EVENT'
  | 'INVALID_OPTIONS'
  | 'SEND_TIMEOUT'
  | 'SEND_INCOMPLETE'
  | 'STOPPED'
  /** The event is larger than the configured maximum (enqueue), or than Kafka takes (relay). */
  | 'EVENT_TOO_LARGE'
  /** The event's topic is not a legal Kafka topic name. */
  | 'INVALID_TOPIC'
  /** Kafka refused events that may pass on a later try; the relay paces its tries. */
  | 'PUBLISH_REFUSED'
  /** A handler ran past its timeout; its row is tried again later. */
  | 'HANDLER_TIMEOUT'
  /** Kafka Connect refused a call of the CDC relay, or its connector or task failed. */
  | 'CDC_CONNECT_FAILED'
  /** A replay asked of an outbox a CDC relay publishes: it would republish nothing. */
  | 'REPLAY_UNDER_CDC';

/** The library's one error type: a stable `code` to branch on, the original error as `cause`. */
export class OutboxError extends Error {
  readonly code: OutboxErrorCode;

  constructor(code: OutboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboxError';
    this.code = code;
  }
}
