import type { TopicMessage } from '../topic-reader.ts';
import type { OutboxEntry, SystemSnapshot } from './snapshot.ts';

/**
 * What a sender published, read from its topic once retention deleted its outbox rows: the
 * first copy of each event, in offset order per partition (a key stays on one partition, so
 * this is each order's order of events). Shaped as outbox rows for the checks that read them.
 */
export function sentOnTopic(messages: readonly TopicMessage[]): OutboxEntry[] {
  const inOrder = [...messages].sort(
    (a, b) => a.partition - b.partition || (BigInt(a.offset) < BigInt(b.offset) ? -1 : 1),
  );
  const seen = new Set<string>();
  const sent: OutboxEntry[] = [];
  for (const message of inOrder) {
    if (seen.has(message.eventId)) continue;
    seen.add(message.eventId);
    sent.push({
      id: BigInt(sent.length + 1),
      eventId: message.eventId,
      eventType: message.eventType,
      partitionKey: message.key,
      published: true,
    });
  }
  return sent;
}

/**
 * Retention deleted rows from every table the scenario's short windows cover: the other checks
 * held while it was deleting, not because it never got to a row.
 */
export function checkDeleted(
  snapshot: SystemSnapshot,
  mustDelete: Readonly<Record<string, readonly string[]>>,
): string[] {
  const violations: string[] = [];
  for (const [service, tables] of Object.entries(mustDelete)) {
    const runs = snapshot.retentionRuns.find((candidate) => candidate.service === service);
    for (const table of tables) {
      if ((runs?.deleted[table] ?? 0) === 0)
        violations.push(`${service}: retention deleted no ${table} row`);
    }
  }
  return violations;
}
