import type { Transaction } from 'kysely';
import type { InboxEvent } from './inbox-event.ts';

/** Handles an event in the row's transaction: its writes commit with the `processed` mark. */
export type TransactionalInboxHandler<DB> = (
  trx: Transaction<DB>,
  event: InboxEvent,
) => Promise<void>;

/**
 * A handler that calls another system (a payment provider, a mail service) before it writes.
 * `call` runs with no transaction and no connection held, so a slow provider costs neither
 * locks nor a pooled connection nor an open xid (which would hold back the relays' fence);
 * `apply` then writes its outcome, with the `processed` mark, in one short transaction.
 *
 * `call` may run more than once for one event: after a crash, a timeout, or a lease that
 * expired while it waited. Pass `event.eventId` to the other system as its idempotency key, so
 * that a repeat returns the first answer instead of acting twice.
 */
export interface CallingInboxHandler<DB, Result> {
  /** Both phases together must finish within `handlerTimeoutMs`; `signal` aborts at the end. */
  call(event: InboxEvent, signal: AbortSignal): Promise<Result>;
  apply(trx: Transaction<DB>, event: InboxEvent, result: Result): Promise<void>;
}

export type InboxHandler<DB> =
  | TransactionalInboxHandler<DB>
  // The result type is each handler's own business; `apply` gets what its own `call` returned.
  | CallingInboxHandler<DB, unknown>;
