import type { Transaction } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxTrx } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/**
 * The dedup consumer's step for one event (R-DIST-OBX-2): records `(consumer, eventId)` in
 * `processed_event` and runs `effect` in the same transaction. A repeat finds the row and only
 * counts itself in the row's `redeliveries`; a concurrent repeat waits on the first one's
 * insert, then does the same. Returns whether the effect ran.
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
  const outbox = outboxTrx(trx);
  const inserted = await outbox
    .insertInto('processed_event')
    .values({ consumer, event_id: eventId })
    .onConflict((oc) => oc.columns(['consumer', 'event_id']).doNothing())
    .returning('event_id')
    .executeTakeFirst();
  if (inserted === undefined) {
    // Only a repeat pays this second statement; a first delivery writes one row and no more.
    await outbox
      .updateTable('processed_event')
      .set((eb) => ({ redeliveries: eb('redeliveries', '+', 1) }))
      .where('consumer', '=', consumer)
      .where('event_id', '=', eventId)
      .execute();
    return false;
  }
  await effect();
  return true;
}
