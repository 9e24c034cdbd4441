import { sql, type Transaction } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxTrx } from '../internal/views.ts';
import { toEventRecord } from '../kafka-port/event-record.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { startEventSpan, tracingAvailable } from '../trace/spans.ts';
import { ANNOUNCE_WRITER, isAnnouncedWriter } from './announced-writer.ts';
import { OUTBOX_CHANNEL } from './channels.ts';
import { DEFAULT_MAX_EVENT_BYTES, invalidTopicReason, recordBytes } from './kafka-limits.ts';
import type { OutboxEventInput } from './outbox-event-input.ts';
import { isUuid, uuidv7 } from './uuid-v7.ts';

export interface EnqueueOptions {
  /**
   * Issue `NOTIFY outbox_event` in the transaction (delivered at commit) to wake the relays at
   * once. Default true: simple, and right for a light write path. On a busy one pass false and
   * call an outbox notifier (`createOutboxNotifier`) after the commit: a notifying commit holds
   * PostgreSQL's cluster-wide notification lock through its WAL flush, so notifying commits run
   * one at a time (docs/benchmarks.md has what that cost).
   */
  readonly notify?: boolean;
  /**
   * Largest event accepted, in bytes of its Kafka record (payload JSON, key, headers); a larger
   * one is refused with OutboxError EVENT_TOO_LARGE, so the caller's transaction fails rather
   * than the relay. Default `DEFAULT_MAX_EVENT_BYTES`, just under Kafka's default 1 MiB limit;
   * raise it only together with the topic's `max.message.bytes` and the relay's `maxEventBytes`.
   */
  readonly maxEventBytes?: number;
}

/**
 * Inserts one event in the caller's transaction, so it commits (or rolls back) with the
 * business rows. Passing a plain Kysely is a compile error (Transaction is nominal) and, for
 * callers that cast around it, a run-time error.
 */
export async function enqueue<DB extends OutboxTables>(
  trx: Transaction<DB>,
  event: OutboxEventInput,
  options: EnqueueOptions = {},
): Promise<{ eventId: string }> {
  const { eventIds } = await enqueueMany(trx, [event], options);
  const eventId = eventIds[0];
  if (eventId === undefined) throw new Error('enqueue inserted no row');
  return { eventId };
}

/**
 * Inserts several events with one INSERT (by `unnest`: one statement text for any count), in
 * array order (their publish order per key). The batch form of a writer: the same writer lock
 * and xid as `enqueue`, once for all of them.
 */
export async function enqueueMany<DB extends OutboxTables>(
  trx: Transaction<DB>,
  events: readonly OutboxEventInput[],
  options: EnqueueOptions = {},
): Promise<{ eventIds: string[] }> {
  // `isTransaction` is true only on a kysely Transaction; JS callers and casts end up here.
  if (typeof trx !== 'object' || trx === null || trx.isTransaction !== true) {
    throw new OutboxError(
      'NOT_A_TRANSACTION',
      'enqueue needs the transaction of the business write (db.transaction().execute(trx => ...)), not a database handle',
    );
  }
  if (events.length === 0) return { eventIds: [] };
  if (!tracingAvailable()) return insertEvents(trx, events, options);
  // One span per event, each the parent its row's traceparent names: a batch span would give
  // events of different requests one parent, and the consumers would continue the wrong trace.
  const traced = events.map((event) => {
    const eventId = event.eventId ?? uuidv7();
    const span = startEventSpan({
      operation: 'enqueue',
      topic: event.topic,
      eventId,
      eventType: event.eventType,
      partitionKey: event.partitionKey,
      headers: event.headers,
    });
    return { span, event: { ...event, eventId, headers: span.propagate(event.headers ?? {}) } };
  });
  try {
    const result = await insertEvents(
      trx,
      traced.map(({ event }) => event),
      options,
    );
    for (const { span } of traced) span.end();
    return result;
  } catch (error) {
    for (const { span } of traced) span.end(error);
    throw error;
  }
}

async function insertEvents<DB extends OutboxTables>(
  trx: Transaction<DB>,
  events: readonly OutboxEventInput[],
  options: EnqueueOptions,
): Promise<{ eventIds: string[] }> {
  const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const rows = events.map((event) => toRow(event, maxEventBytes));
  const db = outboxTrx(trx);
  // Announce the writer, then take the xid, before drawing outbox ids: the relay's
  // commit-order fence waits for transactions that hold the writer lock, and relies on their
  // xid preceding their ids (see docs/architecture.md, "Ordering"). A transaction marked as
  // announced (the inbox processor's) did both in an earlier statement. The NOTIFY is only
  // delivered at commit, so issuing it before the INSERT changes nothing.
  const announce = isAnnouncedWriter(db) ? undefined : ANNOUNCE_WRITER;
  const notify = options.notify === false ? undefined : sql`pg_notify(${OUTBOX_CHANNEL}, '')`;
  const selected = [announce, notify].filter((part) => part !== undefined);
  if (selected.length > 0) await sql`SELECT ${sql.join(selected)}`.execute(db);
  // One statement whose text is the same for any number of events; ids are drawn in array
  // order, which is the publish order of a key.
  await sql`
    INSERT INTO outbox_event
      (event_id, event_type, aggregate_type, aggregate_id, topic, partition_key, payload, headers)
    SELECT event_id, event_type, aggregate_type, aggregate_id, topic, partition_key, payload,
      headers
    FROM unnest(
      ${rows.map((row) => row.event_id)}::uuid[],
      ${rows.map((row) => row.event_type)}::text[],
      ${rows.map((row) => row.aggregate_type)}::text[],
      ${rows.map((row) => row.aggregate_id)}::text[],
      ${rows.map((row) => row.topic)}::text[],
      ${rows.map((row) => row.partition_key)}::text[],
      ${rows.map((row) => row.payload)}::jsonb[],
      ${rows.map((row) => row.headers)}::jsonb[]
    ) WITH ORDINALITY
      AS e(event_id, event_type, aggregate_type, aggregate_id, topic, partition_key, payload,
        headers, ord)
    ORDER BY ord
  `.execute(db);
  return { eventIds: rows.map((row) => row.event_id) };
}

function toRow(event: OutboxEventInput, maxEventBytes: number) {
  const eventId = event.eventId ?? uuidv7();
  const refuse = (code: 'INVALID_EVENT' | 'INVALID_TOPIC' | 'EVENT_TOO_LARGE', reason: string) =>
    new OutboxError(code, `event ${eventId} (${event.eventType}): ${reason}`);
  const invalid = (reason: string) => refuse('INVALID_EVENT', reason);
  if (!isUuid(eventId)) throw invalid('eventId must be a UUID');
  for (const field of ['eventType', 'aggregateType', 'aggregateId', 'topic'] as const) {
    if (typeof event[field] !== 'string' || event[field] === '') throw invalid(`${field} is empty`);
  }
  if (typeof event.partitionKey !== 'string') throw invalid('partitionKey must be a string');
  const badTopic = invalidTopicReason(event.topic);
  if (badTopic !== undefined) throw refuse('INVALID_TOPIC', badTopic);
  const payload = JSON.stringify(event.payload);
  if (payload === undefined) throw invalid('payload is not JSON-serialisable');
  const bytes = recordBytes(
    toEventRecord({
      topic: event.topic,
      event_id: eventId,
      event_type: event.eventType,
      aggregate_type: event.aggregateType,
      aggregate_id: event.aggregateId,
      partition_key: event.partitionKey,
      payload,
      headers: event.headers ?? {},
      created_at: new Date(),
    }),
  );
  if (bytes > maxEventBytes) {
    throw refuse(
      'EVENT_TOO_LARGE',
      `${bytes} bytes as a Kafka record, above the ${maxEventBytes} allowed`,
    );
  }
  return {
    event_id: eventId,
    event_type: event.eventType,
    aggregate_type: event.aggregateType,
    aggregate_id: event.aggregateId,
    topic: event.topic,
    partition_key: event.partitionKey,
    payload,
    headers: JSON.stringify(event.headers ?? {}),
  };
}
