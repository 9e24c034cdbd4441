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
    // The rows read as the handlers' events; the guide reads no headers and counts no attempts.
    const batch = await sql<Omit<InboxEvent, 'headers' | 'attempts'>>`
      SELECT event_id AS "eventId", event_type AS "eventType", aggregate_type AS "aggregateType",
        aggregate_id AS "aggregateId", partition_key AS "partitionKey", payload, topic,
        kafka_partition AS "partition", kafka_offset AS "offset", occurred_at AS "occurredAt",
        received_at AS "receivedAt"
      FROM inbox_event WHERE NOT processed ORDER BY received_at LIMIT ${GUIDE_BATCH}`.execute(
      deps.db,
    );
    for (const row of batch.rows) {
      if (!running) return;
      const handler = deps.handlers[row.eventType];
      const event: InboxEvent = { ...row, headers: {}, attempts: 0 };
      await deps.db.transaction().execute(async (trx) => {
        if (handler !== undefined) await handleInTransaction(trx, handler, event);
        await sql`UPDATE inbox_event SET processed = true, processed_at = now()
          WHERE event_id = ${row.eventId}`.execute(trx);
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
