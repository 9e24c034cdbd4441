import type { ConsumedMessage } from '../kafka-port/kafka-client.ts';
import { sql, type Kysely, type Transaction } from 'kysely';
import { dataErrorOf, refusedDataReason } from '../internal/data-error.ts';
import { describe } from '../internal/state-log.ts';
import { parkMessages, type ParkItem } from '../receive/park.ts';
import type { ReceivedEvent } from '../receive/received-event.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, tracingAvailable } from '../trace/spans.ts';
import { inboxRowOf, insertInboxEvents, type InboxRow } from './insert-inbox-events.ts';

/** A parsed event with the message it came from (parked as is if PostgreSQL refuses it). */
export interface AcceptedMessage {
  readonly event: ReceivedEvent;
  readonly message: ConsumedMessage;
  /** The message's value as received (JSON text): stored as the payload. */
  readonly payloadJson: string;
}

export interface StoredBatch {
  /** Events that were new (the rest were repeats). */
  readonly inserted: number;
  /** Their ids, lower case. */
  readonly insertedIds: readonly string[];
  /**
   * Events that could not be stored (PostgreSQL refused their data, or no row could be made of
   * them); they were parked with the batch's rejects.
   */
  readonly refused: readonly ParkItem[];
}

/**
 * Stores one Kafka batch in one transaction: its events with one INSERT, its rejects in
 * `parked_message` (the caller wakes the processors after the commit); a batch with nothing to
 * park is that one INSERT alone, in autocommit. When PostgreSQL
 * refuses the data of an event (a NUL in jsonb, an index row too large...), that transaction
 * rolls back and a second one finds the refused events by halving the batch under
 * savepoints, parks them with the reason, and stores the others. The happy path pays nothing
 * for this. An event no row can be made of (whatever its content makes throw) is parked too,
 * before any statement. Any other error (PostgreSQL unreachable or restarting) is thrown, for
 * the caller to retry in place: it cannot come from one event's content.
 */
export async function storeInboxBatch(
  db: Kysely<OutboxTables>,
  consumerGroup: string,
  batch: InboxBatch,
): Promise<StoredBatch> {
  if (!tracingAvailable()) return storeAll(db, consumerGroup, batch);
  // Each event's store continues the trace its message carries; a repeat the conflict clause
  // dropped says so, in the trace of the event it repeats.
  const spans = batch.accepted.map(({ event }) =>
    startEventSpan({
      operation: 'store',
      topic: event.topic,
      eventId: event.eventId,
      eventType: event.eventType,
      partitionKey: event.partitionKey,
      headers: event.headers,
      consumerGroup,
      partition: event.partition,
      offset: event.offset,
    }),
  );
  let stored: StoredBatch;
  try {
    stored = await storeAll(db, consumerGroup, batch);
  } catch (error) {
    for (const span of spans) span.end(error);
    throw error;
  }
  const inserted = new Set(stored.insertedIds);
  const refused = new Set(stored.refused.map((item) => item.message));
  batch.accepted.forEach(({ event, message }, i) => {
    const span = spans[i];
    if (span === undefined) return;
    if (refused.has(message)) return span.end('parked: its data cannot be stored');
    // A repeat within the batch: the first copy was stored, this one dropped.
    if (!inserted.delete(event.eventId.toLowerCase())) span.markDuplicate();
    span.end();
  });
  return stored;
}

interface InboxBatch {
  readonly topic: string;
  readonly partition: number;
  readonly accepted: readonly AcceptedMessage[];
  readonly parked: readonly ParkItem[];
}

/** An accepted message with the row it is stored as. */
interface StorableMessage {
  readonly accepted: AcceptedMessage;
  readonly row: InboxRow;
}

/** The row of each accepted message; a message whose row cannot be made is parked instead. */
function rowsOf(batch: InboxBatch): { storable: StorableMessage[]; unstorable: ParkItem[] } {
  const storable: StorableMessage[] = [];
  const unstorable: ParkItem[] = [];
  for (const accepted of batch.accepted) {
    try {
      storable.push({ accepted, row: inboxRowOf(accepted.event, accepted.payloadJson) });
    } catch (error) {
      unstorable.push({
        topic: batch.topic,
        partition: batch.partition,
        message: accepted.message,
        reason: `cannot be stored: ${describe(error)}`,
      });
    }
  }
  return { storable, unstorable };
}

async function storeAll(
  db: Kysely<OutboxTables>,
  consumerGroup: string,
  batch: InboxBatch,
): Promise<StoredBatch> {
  const { storable, unstorable } = rowsOf(batch);
  let firstRefusal: string;
  try {
    // Nothing to park: the INSERT is the batch's one statement, in autocommit, without a
    // BEGIN and a COMMIT around it (its repeats, if any, are counted by a second one).
    if (batch.parked.length === 0 && unstorable.length === 0) {
      const insertedIds = await insertInboxEvents(db, consumerGroup, rowsOfItems(storable));
      return { inserted: insertedIds.length, insertedIds, refused: [] };
    }
    return await db.transaction().execute(async (trx) => {
      const insertedIds = await insertInboxEvents(trx, consumerGroup, rowsOfItems(storable));
      await parkMessages(trx, consumerGroup, [...batch.parked, ...unstorable]);
      return { inserted: insertedIds.length, insertedIds, refused: unstorable };
    });
  } catch (error) {
    const refusal = dataErrorOf(error);
    if (refusal === undefined) throw error;
    firstRefusal = refusedDataReason(refusal);
  }
  return db.transaction().execute(async (trx) => {
    const isolating: Isolation = { trx, consumerGroup, batch, refused: [...unstorable] };
    const insertedIds = await isolate(isolating, storable, firstRefusal);
    await parkMessages(trx, consumerGroup, [...batch.parked, ...isolating.refused]);
    return { inserted: insertedIds.length, insertedIds, refused: isolating.refused };
  });
}

const rowsOfItems = (items: readonly StorableMessage[]): InboxRow[] =>
  items.map((item) => item.row);

/** The transaction that finds a batch's refused events, and those it found so far. */
interface Isolation {
  readonly trx: Transaction<OutboxTables>;
  readonly consumerGroup: string;
  readonly batch: InboxBatch;
  readonly refused: ParkItem[];
}

/** Inserts under a savepoint; a data error rolls back to it and is returned, not thrown. */
async function tryInsert(
  { trx, consumerGroup }: Isolation,
  items: readonly StorableMessage[],
): Promise<{ inserted: string[] } | { refusal: string }> {
  if (items.length === 0) return { inserted: [] };
  await sql`SAVEPOINT inbox_isolate`.execute(trx);
  try {
    const inserted = await insertInboxEvents(trx, consumerGroup, rowsOfItems(items));
    await sql`RELEASE SAVEPOINT inbox_isolate`.execute(trx);
    return { inserted };
  } catch (error) {
    const refusal = dataErrorOf(error);
    if (refusal === undefined) throw error;
    await sql`ROLLBACK TO SAVEPOINT inbox_isolate`.execute(trx);
    await sql`RELEASE SAVEPOINT inbox_isolate`.execute(trx);
    return { refusal: refusedDataReason(refusal) };
  }
}

/** Stores `items`, which hold at least one refused event, half by half; parks the refused. */
async function isolate(
  isolating: Isolation,
  items: readonly StorableMessage[],
  reason: string,
): Promise<string[]> {
  const [only] = items;
  if (items.length === 1 && only !== undefined) {
    const { topic, partition } = isolating.batch;
    isolating.refused.push({ topic, partition, message: only.accepted.message, reason });
    return [];
  }
  const middle = Math.ceil(items.length / 2);
  const inserted: string[] = [];
  // Left half first: rows keep the batch's order in `seq`.
  for (const half of [items.slice(0, middle), items.slice(middle)]) {
    const result = await tryInsert(isolating, half);
    inserted.push(
      ...('refusal' in result ? await isolate(isolating, half, result.refusal) : result.inserted),
    );
  }
  return inserted;
}
