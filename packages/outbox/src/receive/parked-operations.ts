import type { Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import type { EventProducer, OutgoingHeaders } from '../kafka-port/kafka-client.ts';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { readParkedMessages, type ParkedMessage } from './read-parked-messages.ts';

/**
 * Requeue, once the cause is fixed (the consumer deployed that accepts them, the producer's
 * bad bytes understood): produces each parked message again to its topic, with its key,
 * value and headers exactly as received, then deletes its row. Produced before deleted, so a
 * crash in between requeues it twice at worst, and the consumers' dedup drops the repeat.
 * `producer` must be connected (the relay's kind). Returns the ids requeued; ids that are not
 * parked are left out. A message Kafka refuses stops the requeue with an error that says why.
 */
export async function requeueParkedMessages<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  producer: EventProducer,
  ids: readonly string[],
  timeoutMs = 30_000,
): Promise<string[]> {
  const messages = await readParkedMessages(dbIn, { ids, limit: Math.max(ids.length, 1) });
  const requeued: string[] = [];
  for (const message of messages) {
    const report = await producer.send(
      [
        {
          topic: message.topic,
          key: message.key,
          value: message.value,
          headers: kafkaHeaders(message),
        },
      ],
      { timeoutMs, keepAlive: async () => undefined },
    );
    const outcome = report.outcomes[0];
    if (outcome?.kind !== 'acked') {
      const why =
        outcome?.kind === 'refused' ? outcome.reason : `not sent: ${String(report.interruption)}`;
      throw new OutboxError(
        'PUBLISH_REFUSED',
        `parked message ${message.id} was not requeued: ${why}`,
      );
    }
    await outboxDb(dbIn).deleteFrom('parked_message').where('id', '=', message.id).execute();
    requeued.push(message.id);
  }
  return requeued;
}

/** Discard: deletes parked messages (record them elsewhere first). Returns how many went. */
export async function discardParkedMessages<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await outboxDb(dbIn)
    .deleteFrom('parked_message')
    .where('id', 'in', [...ids])
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The stored header pairs as a producer takes them: a repeated name carries every value in order. */
function kafkaHeaders(message: ParkedMessage): OutgoingHeaders {
  const headers: Record<string, Buffer[]> = {};
  for (const header of message.headers) {
    // A header without a value cannot be produced by every client; it is left out.
    if (header.value === null) continue;
    (headers[header.name] ??= []).push(header.value);
  }
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => {
      const [only] = values;
      return [name, values.length === 1 && only !== undefined ? only : values];
    }),
  );
}
