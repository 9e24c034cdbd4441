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

/** One event of a batch, with what its `call` returned (undefined without a `call`). */
export interface InboxBatchItem<Result> {
  readonly event: InboxEvent;
  readonly result: Result;
}

/**
 * The batch form, for a hot event type: `applyBatch` writes the effects of all of a claim's
 * events of the type with a number of statements that does not grow with them (INSERT …
 * SELECT FROM unnest, `enqueueMany`), instead of a few statements per event. The per-event
 * handlers above stay the simple default; write this form when one type carries the load.
 *
 * Poison isolation stays exact: when `applyBatch` throws, its writes are rolled back and each
 * event is applied again alone (`applyBatch` with one item, in a savepoint of its own), so only
 * the events that fail alone fail, and each spends only its own attempt. `applyBatch` must
 * therefore give each event the effect it would have alone (claims never hold two events of
 * one partition key). The optional `call` runs per event as a CallingInboxHandler's does, with
 * no transaction; the processor's `beforeHandler` hook runs there too, for every event.
 */
export interface BatchInboxHandler<DB, Result> {
  call?(event: InboxEvent, signal: AbortSignal): Promise<Result>;
  applyBatch(trx: Transaction<DB>, items: readonly InboxBatchItem<Result>[]): Promise<void>;
}

export type InboxHandler<DB> =
  | TransactionalInboxHandler<DB>
  // The result type is each handler's own business; `apply` gets what its own `call` returned.
  | CallingInboxHandler<DB, unknown>
  | BatchInboxHandler<DB, unknown>;

/** Whether `handler` is the batch form. */
export function isBatchHandler<DB>(
  handler: InboxHandler<DB> | undefined,
): handler is BatchInboxHandler<DB, unknown> {
  return typeof handler === 'object' && 'applyBatch' in handler;
}
