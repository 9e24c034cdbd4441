import type { ConsumedMessage, MessageHeaders } from '../kafka-port/kafka-client.ts';
import type { Transaction } from 'kysely';
import { storableText } from '../internal/storable-text.ts';
import type { OutboxTables } from '../schema/tables.ts';

export interface ParkItem {
  readonly topic: string;
  readonly partition: number;
  readonly message: ConsumedMessage;
  readonly reason: string;
}

/**
 * Stores rejected messages, raw bytes and reason, in `parked_message` (in the caller's
 * transaction, so parking and the offset commit that follows stay consistent). Key, value and
 * headers go in as bytes, and the reason is made storable, so no content can make parking fail.
 */
export async function parkMessages(
  trx: Transaction<OutboxTables>,
  consumer: string,
  items: readonly ParkItem[],
): Promise<void> {
  if (items.length === 0) return;
  await trx
    .insertInto('parked_message')
    .values(
      items.map((item) => {
        const headers = headerPairs(item.message.headers);
        return {
          consumer,
          topic: storableText(item.topic),
          kafka_partition: item.partition,
          kafka_offset: item.message.offset,
          message_key: item.message.key,
          message_value: item.message.value,
          header_names: headers.map(([name]) => Buffer.from(name, 'utf8')),
          header_values: headers.map(([, value]) => value),
          reason: storableText(item.reason.slice(0, 2000)),
        };
      }),
    )
    .execute();
}

/** Every header in received order, repeats included; a header without a value stays null. */
function headerPairs(headers: MessageHeaders | undefined): [string, Buffer | null][] {
  const pairs: [string, Buffer | null][] = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    const values: readonly (Buffer | string | null | undefined)[] =
      typeof value === 'string' || Buffer.isBuffer(value) || value == null ? [value] : value;
    for (const one of values) {
      if (one === undefined) continue;
      pairs.push([name, typeof one === 'string' ? Buffer.from(one, 'utf8') : one]);
    }
  }
  return pairs;
}
