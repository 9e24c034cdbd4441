import type { ConsumedMessage } from '../kafka-port/kafka-client.ts';
import { sql, type Kysely, type Transaction } from 'kysely';
import { dataErrorOf, refusedDataReason } from '../internal/data-error.ts';
import { parkMessages, type ParkItem } from '../kafka/park.ts';
import type { ReceivedEvent } from '../kafka/received-event.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, tracingAvailable } from '../trace/spans.ts';
import { insertInboxEvents } from './insert-inbox-events.ts';

/** A parsed event with the message it came from (parked as is if PostgreSQL refuses it). */
export interface AcceptedMessage {
  readonly event: ReceivedEvent;
  readonly message: ConsumedMessage;
}

export interface StoredBatch {
  /** Events that were new (the rest were repeats). */
  readonly inserted: number;
  /** Their ids, lower case. */
  readonly insertedIds: readonly string[];
  /** Events PostgreSQL refused to store; they were parked with the batch's rejects. */
  readonly refused: readonly ParkItem[];
}

/**
 * Stores one Kafka batch in one transaction: its events with one INSERT, its rejects in
 * `parked_message` (the caller wakes the processors after the commit). When PostgreSQL
 * refuses the data of an event (a NUL in jsonb, an index row too large...), that transaction
 * rolls back and a second one finds the refused events by halving the batch under
 * savepoints, parks them with the reason, and stores the others. The happy path pays nothing
 * for this. Any other error (PostgreSQL unreachable or restarting) is thrown, for the caller to
 * retry in place.
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
    if (refused.has(message)) return span.end('parked: PostgreSQL refused its data');
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

async function storeAll(
  db: Kysely<OutboxTables>,
  consumerGroup: string,
  batch: InboxBatch,
): Promise<StoredBatch> {
  const finish = async (
    trx: Transaction<OutboxTables>,
    insertedIds: readonly string[],
    refused: readonly ParkItem[],
  ): Promise<StoredBatch> => {
    await parkMessages(trx, consumerGroup, [...batch.parked, ...refused]);
    return { inserted: insertedIds.length, insertedIds, refused };
  };
  let firstRefusal: string;
  try {
    return await db.transaction().execute(async (trx) => {
      const events = batch.accepted.map((item) => item.event);
      return finish(trx, await insertInboxEvents(trx, consumerGroup, events), []);
    });
  } catch (error) {
    const refusal = dataErrorOf(error);
    if (refusal === undefined) throw error;
    firstRefusal = refusedDataReason(refusal);
  }
  return db.transaction().execute(async (trx) => {
    const refused: ParkItem[] = [];
    /** Inserts under a savepoint; a data error rolls back to it and is returned, not thrown. */
    const tryInsert = async (
      items: readonly AcceptedMessage[],
    ): Promise<{ inserted: string[] } | { refusal: string }> => {
      if (items.length === 0) return { inserted: [] };
      await sql`SAVEPOINT inbox_isolate`.execute(trx);
      try {
        const events = items.map((item) => item.event);
        const inserted = await insertInboxEvents(trx, consumerGroup, events);
        await sql`RELEASE SAVEPOINT inbox_isolate`.execute(trx);
        return { inserted };
      } catch (error) {
        const refusal = dataErrorOf(error);
        if (refusal === undefined) throw error;
        await sql`ROLLBACK TO SAVEPOINT inbox_isolate`.execute(trx);
        await sql`RELEASE SAVEPOINT inbox_isolate`.execute(trx);
        return { refusal: refusedDataReason(refusal) };
      }
    };
    /** Stores `items`, which hold at least one refused event, half by half; parks the refused. */
    const isolate = async (
      items: readonly AcceptedMessage[],
      reason: string,
    ): Promise<string[]> => {
      const [only] = items;
      if (items.length === 1 && only !== undefined) {
        refused.push({
          topic: batch.topic,
          partition: batch.partition,
          message: only.message,
          reason,
        });
        return [];
      }
      const middle = Math.ceil(items.length / 2);
      const inserted: string[] = [];
      // Left half first: rows keep the batch's order in `seq`.
      for (const half of [items.slice(0, middle), items.slice(middle)]) {
        const result = await tryInsert(half);
        inserted.push(
          ...('refusal' in result ? await isolate(half, result.refusal) : result.inserted),
        );
      }
      return inserted;
    };
    return finish(trx, await isolate(batch.accepted, firstRefusal), refused);
  });
}
