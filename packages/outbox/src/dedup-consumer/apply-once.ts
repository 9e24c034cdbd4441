import type { Transaction } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxTrx } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * The dedup consumer's step for one event (R-DIST-OBX-2): records `(consumer, eventId)` in
 * `processed_event` and runs `effect` in the same transaction. A repeat finds the row and does
 * nothing; a concurrent repeat waits on the first one's insert, then does nothing. Returns
 * whether the effect ran.
 */
export async function applyOnce<DB extends OutboxTables>(
  trx: Transaction<DB>,
  consumer: string,
  eventId: string,
  effect: () => Promise<void>,
): Promise<boolean> {
  if (typeof trx !== 'object' || trx === null || trx.isTransaction !== true) {
    throw new OutboxError(
      'NOT_A_TRANSACTION',
      'applyOnce needs the transaction that applies the effect, not a database handle',
    );
  }
  const inserted = await outboxTrx(trx)
    .insertInto('processed_event')
    .values({ consumer, event_id: eventId })
    .onConflict((oc) => oc.columns(['consumer', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  await effect();
  return true;
}
