// THE BASELINE, NOT A PATTERN. The style guide's inbox processor transcribed as written
// (seed/outbox-inbox-style-guide.ru.txt, "Inbox pattern"): `@Scheduled(fixedDelay = 200)`
// fetches 100 unprocessed rows, then handles them one by one, each in its own local transaction
// (the handler, a remote call included, and the processed mark). No per-key order across rows
// in flight, no attempts, no timeouts. It exists only so B7 can say how far ahead the
// library's processor is. Never copy it.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { InboxEvent, InboxHandler, OutboxTables } from '@outbox-inbox/outbox';
import { sleep } from '../../stats.ts';

const GUIDE_BATCH = 100;
const GUIDE_FIXED_DELAY_MS = 200;

interface GuideRow {
  readonly event_id: string;
  readonly event_type: string;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly partition_key: string;
  readonly payload: unknown;
  readonly topic: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
  readonly occurred_at: Date;
  readonly received_at: Date;
}

function toEvent(row: GuideRow): InboxEvent {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    partitionKey: row.partition_key,
    payload: row.payload,
    occurredAt: row.occurred_at,
    topic: row.topic,
    partition: row.kafka_partition,
    offset: row.kafka_offset,
    headers: {},
    receivedAt: row.received_at,
    attempts: 0,
  };
}

/** The handler inside the row's transaction, as the guide's processEventInLocalTransaction. */
async function handleInTransaction<DB>(
  trx: Transaction<DB>,
  handler: InboxHandler<DB>,
  event: InboxEvent,
): Promise<void> {
  if (typeof handler === 'function') return handler(trx, event);
  const signal = new AbortController().signal;
  if ('applyBatch' in handler) {
    const result = handler.call === undefined ? undefined : await handler.call(event, signal);
    return handler.applyBatch(trx, [{ event, result }]);
  }
  return handler.apply(trx, event, await handler.call(event, signal));
}

export async function startGuideProcessor<DB extends OutboxTables>(deps: {
  readonly db: Kysely<DB>;
  readonly handlers: Readonly<Record<string, InboxHandler<DB>>>;
}): Promise<{ stop(): Promise<void> }> {
  let running = true;
  const runOnce = async (): Promise<void> => {
    const batch = await sql<GuideRow>`
      SELECT event_id, event_type, aggregate_type, aggregate_id, partition_key, payload, topic,
        kafka_partition, kafka_offset, occurred_at, received_at
      FROM inbox_event WHERE NOT processed ORDER BY received_at LIMIT ${GUIDE_BATCH}`.execute(
      deps.db,
    );
    for (const row of batch.rows) {
      if (!running) return;
      const handler = deps.handlers[row.event_type];
      await deps.db.transaction().execute(async (trx) => {
        if (handler !== undefined) await handleInTransaction(trx, handler, toEvent(row));
        await sql`UPDATE inbox_event SET processed = true, processed_at = now()
          WHERE event_id = ${row.event_id}`.execute(trx);
      });
    }
  };
  const loop = (async () => {
    while (running) {
      await runOnce();
      if (running) await sleep(GUIDE_FIXED_DELAY_MS);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}
