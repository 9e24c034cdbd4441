import type { IHeaders, Producer } from 'kafkajs';
import type { Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { readParkedMessages, type ParkedMessage } from './read-parked-messages.ts';

/**
 * Requeue, once the cause is fixed (the consumer deployed that accepts them, the producer's
 * bad bytes understood): produces each parked message again to its topic, with its key,
 * value and headers exactly as received, then deletes its row. Produced before deleted, so a
 * crash in between requeues it twice at worst, and the consumers' dedup drops the repeat.
 * `producer` must be connected (idempotent, acks -1 is what the relay uses). Returns the ids
 * requeued; ids that are not parked are left out.
 */
export async function requeueParkedMessages<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  producer: Producer,
  ids: readonly string[],
): Promise<string[]> {
  const messages = await readParkedMessages(dbIn, { ids, limit: Math.max(ids.length, 1) });
  const requeued: string[] = [];
  for (const message of messages) {
    await producer.send({
      topic: message.topic,
      acks: -1,
      messages: [{ key: message.key, value: message.value, headers: kafkaHeaders(message) }],
    });
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

/** The stored header pairs as kafkajs takes them: a repeated name carries every value in order. */
function kafkaHeaders(message: ParkedMessage): IHeaders {
  const headers: Record<string, Buffer[]> = {};
  for (const header of message.headers) {
    // A header without a value cannot be produced by kafkajs; it is left out.
    if (header.value === null) continue;
    (headers[header.name] ??= []).push(header.value);
  }
  return Object.fromEntries(
    Object.entries(headers).map(([name, values]) => [
      name,
      values.length === 1 ? values[0] : values,
    ]),
  );
}
