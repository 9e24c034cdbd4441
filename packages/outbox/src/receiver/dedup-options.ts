import type { BackoffOptions } from '../internal/backoff.ts';
import type { EventValidator } from '../kafka/received-event.ts';

export interface DedupConsumerOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Name under which `processed_event` rows are written (one service may have several). */
  readonly consumerName: string;
  readonly validate?: EventValidator;
  readonly fromBeginning?: boolean;
  /**
   * Handler failures (with PostgreSQL reachable) before the message is parked and the
   * partition moves on. Failures while PostgreSQL is down are not counted: they retry forever.
   */
  readonly maxAttempts?: number;
  readonly backoff?: Partial<BackoffOptions>;
}
