import type { TopicMessage } from '../topic-reader.ts';
import type { OutboxEntry } from './snapshot.ts';

export interface TopicDelivery {
  readonly messages: number;
  readonly distinct: number;
}

/**
 * Every outbox event reached the topic, nothing reached it that the outbox does not have,
 * each message is keyed by its row's partition_key, each key stays on one partition, and per
 * key the first delivery of each event follows the outbox order.
 */
export function checkTopic(
  topic: string,
  messages: readonly TopicMessage[],
  outbox: readonly OutboxEntry[],
): { violations: string[]; delivery: TopicDelivery } {
  const violations: string[] = [];
  const rowOf = new Map(outbox.map((row) => [row.eventId, row]));
  const seen = new Set<string>();
  const lastIdOfKey = new Map<string, bigint>();
  const partitionOfKey = new Map<string, number>();
  for (const message of messages) {
    const row = rowOf.get(message.eventId);
    if (row === undefined) {
      violations.push(`${topic}: event ${message.eventId} is on the topic but not in the outbox`);
      continue;
    }
    if (message.key !== row.partitionKey)
      violations.push(
        `${topic}: event ${message.eventId} keyed ${message.key}, its partition_key is ${row.partitionKey}`,
      );
    const partition = partitionOfKey.get(message.key);
    if (partition !== undefined && partition !== message.partition)
      violations.push(
        `${topic}: key ${message.key} on partitions ${partition} and ${message.partition}`,
      );
    partitionOfKey.set(message.key, message.partition);
    if (seen.has(message.eventId)) continue;
    seen.add(message.eventId);
    const previous = lastIdOfKey.get(message.key);
    if (previous !== undefined && row.id < previous)
      violations.push(
        `${topic}: key ${message.key} delivered outbox #${row.id} after #${previous}`,
      );
    lastIdOfKey.set(message.key, row.id);
  }
  const missing = outbox.filter((row) => !seen.has(row.eventId));
  if (missing.length > 0)
    violations.push(`${topic}: ${missing.length} outbox events never reached the topic (lost)`);
  return { violations, delivery: { messages: messages.length, distinct: seen.size } };
}
