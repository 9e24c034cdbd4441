import type { Kysely } from 'kysely';
import type { Logger } from '../logger.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { claimInboxRows, type InboxClaim } from './claim-inbox-rows.ts';
import { giveBackAttempts, type CountedAttempt } from './give-back-attempts.ts';

/**
 * Attempts whose write transaction never began, by event id: the claim counted them, then the
 * pool had no connection for the write within its timeout (or BEGIN failed), so no handler
 * wrote anything. They are given back by the next claim, on the connection it holds anyway.
 *
 * Taking the write's connection before the claim and keeping it to the commit would close the
 * gap for plain handlers, but a calling handler's `call` runs between claim and write and must
 * hold no connection (see CallingInboxHandler; payment-service runs more workers than its pool
 * has connections for that reason), so the gap stays and is compensated. The count still does
 * its job: a handler that hangs or fails, a `call` that fails, or a process that dies before
 * giving back keeps its attempt counted.
 */
export class OwedAttempts {
  readonly #db: Kysely<OutboxTables>;
  readonly #owed = new Map<string, number>();

  constructor(db: Kysely<OutboxTables>) {
    this.#db = db;
  }

  owe(attempts: readonly CountedAttempt[]): void {
    for (const { eventId, attempts: count } of attempts) {
      // A later claim's count of the row replaces an older one.
      if ((this.#owed.get(eventId) ?? 0) <= count) this.#owed.set(eventId, count);
    }
  }

  /** A claim that first gives back what is owed, on the same connection. */
  async claim(options: Parameters<typeof claimInboxRows>[1]): Promise<InboxClaim> {
    if (this.#owed.size === 0) return claimInboxRows(this.#db, options);
    const giving = this.#take();
    let given = false;
    try {
      return await this.#db.connection().execute(async (connection) => {
        await giveBackAttempts(connection, giving);
        given = true;
        return claimInboxRows(connection, options);
      });
    } catch (error) {
      if (!given) this.owe(giving);
      throw error;
    }
  }

  /**
   * At stop, what no later claim gave back. If PostgreSQL still does not answer, the attempts
   * stay counted, as those of a process that dies.
   */
  async giveBackAll(logger: Logger): Promise<void> {
    await giveBackAttempts(this.#db, this.#take()).catch((error: unknown) =>
      logger.warn(
        { component: 'inbox-processor', err: error },
        'could not give back attempts whose write never began; they stay counted',
      ),
    );
  }

  #take(): CountedAttempt[] {
    const taken = [...this.#owed].map(([eventId, attempts]) => ({ eventId, attempts }));
    this.#owed.clear();
    return taken;
  }
}
