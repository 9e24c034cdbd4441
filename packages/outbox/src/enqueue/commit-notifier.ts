import { sql, type QueryExecutorProvider } from 'kysely';
import type { Logger } from '../logger.ts';
import { INBOX_CHANNEL, OUTBOX_CHANNEL } from './channels.ts';

/**
 * Sends `NOTIFY <channel>` in a statement of its own, after the caller's commit, so the
 * writing transaction does not NOTIFY. A transaction that NOTIFYs takes PostgreSQL's one
 * cluster-wide notification lock at commit and holds it through its WAL flush: with `fsync`
 * on, every notifying commit of every database waits for the one before it (the measurement
 * is in docs/benchmarks.md). A NOTIFY still takes a transaction id, so its own commit writes
 * a commit record; that commit runs with `synchronous_commit = off` and does not wait for a
 * WAL flush. It is only a hint: a NOTIFY lost in a crash costs the listeners one poll
 * interval, never a row (the rows it points at were committed, durably, before it).
 *
 * Calls are coalesced: while one NOTIFY is on its way, further calls send one more after it,
 * never more. That wakes the listeners after every commit that called `notify()`: a call
 * either starts a NOTIFY that follows it, or finds one in flight and queues the next.
 * A NOTIFY that fails is logged and dropped; the listeners' poll picks the rows up.
 */
export class CommitNotifier {
  readonly #db: QueryExecutorProvider;
  readonly #channel: string;
  readonly #logger: Logger;
  #sending: Promise<void> | undefined;
  #again = false;

  /** `db`: a Kysely (any schema) whose pool the NOTIFY borrows a connection from. */
  constructor(db: QueryExecutorProvider, channel: string, logger: Logger) {
    this.#db = db;
    this.#channel = channel;
    this.#logger = logger;
  }

  /** Call after the commit whose rows the listeners should see; returns at once. */
  notify(): void {
    if (this.#sending !== undefined) {
      this.#again = true;
      return;
    }
    this.#sending = this.#send();
  }

  /** Resolves when no NOTIFY is in flight (before the caller closes its pool). */
  async idle(): Promise<void> {
    while (this.#sending !== undefined) await this.#sending;
  }

  async #send(): Promise<void> {
    do {
      this.#again = false;
      try {
        await sql`SELECT set_config('synchronous_commit', 'off', true), pg_notify(${this.#channel}, '')`.execute(
          this.#db,
        );
      } catch (error) {
        this.#logger.warn(
          { err: error, channel: this.#channel },
          `NOTIFY ${this.#channel} failed; the listeners' poll will find the rows`,
        );
      }
    } while (this.#again);
    // In the same step as the last check: a call after it starts a NOTIFY of its own. (Cleared
    // in a later callback, a call in between would set #again for a loop that had ended.)
    this.#sending = undefined;
  }
}

/**
 * Wakes the relays after a commit that enqueued with `notify: false`: the way to enqueue on a
 * busy write path (see EnqueueOptions.notify). One per process and database.
 */
export function createOutboxNotifier(db: QueryExecutorProvider, logger: Logger): CommitNotifier {
  return new CommitNotifier(db, OUTBOX_CHANNEL, logger);
}

/** Wakes the inbox processors after the inbox writer's commit. */
export function createInboxNotifier(db: QueryExecutorProvider, logger: Logger): CommitNotifier {
  return new CommitNotifier(db, INBOX_CHANNEL, logger);
}
