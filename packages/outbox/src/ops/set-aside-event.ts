import type { EventSummary } from '../internal/event-summary.ts';

/**
 * An event set aside until an operator acts: a FAILED outbox row (Kafka refused it) or a dead
 * inbox row (its handler kept failing). The later events of its key wait behind it.
 */
export interface SetAsideEvent extends EventSummary {
  /** Failed attempts: Kafka's (or the relay's pre-send check's) refusals, or the handler's. */
  readonly attempts: number;
  /** Why the last attempt failed. */
  readonly lastError: string | null;
}
