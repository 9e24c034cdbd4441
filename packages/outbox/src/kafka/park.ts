import type { KafkaMessage } from 'kafkajs';
import type { Transaction } from 'kysely';
import type { OutboxTables } from '../schema/tables.ts';
import { headersToStrings } from './event-headers.ts';

export interface ParkItem {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaMessage;
  readonly reason: string;
}

/**
 * Stores rejected messages, raw bytes and reason, in `parked_message` (in the caller's
 * transaction, so parking and the offset commit that follows stay consistent).
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
      items.map((item) => ({
        consumer,
        topic: item.topic,
        kafka_partition: item.partition,
        kafka_offset: item.message.offset,
        message_key: item.message.key,
        message_value: item.message.value,
        headers: JSON.stringify(headersToStrings(item.message.headers)),
        reason: item.reason.slice(0, 2000),
      })),
    )
    .execute();
}
