import type { Kysely } from 'kysely';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

/** A parked Kafka message as received: raw key, value and headers, and why it was parked. */
export interface ParkedMessage {
  readonly id: string;
  readonly consumer: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In received order, repeats included; `value` is null for a header without a value. */
  readonly headers: readonly { readonly name: string; readonly value: Buffer | null }[];
  readonly reason: string;
  readonly parkedAt: Date;
}

/**
 * Reads parked messages oldest first, for an operator or a job that forwards them (to a DLQ
 * topic, or back to their topic once the cause is fixed). Page with `afterId`.
 */
export async function readParkedMessages<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  selection: {
    readonly consumer?: string;
    readonly afterId?: string;
    /** Only these ids. */
    readonly ids?: readonly string[];
    readonly limit?: number;
  } = {},
): Promise<ParkedMessage[]> {
  let query = outboxDb(dbIn)
    .selectFrom('parked_message')
    .selectAll()
    .orderBy('id')
    .limit(selection.limit ?? 100);
  if (selection.consumer !== undefined) query = query.where('consumer', '=', selection.consumer);
  if (selection.afterId !== undefined) query = query.where('id', '>', selection.afterId);
  if (selection.ids !== undefined) {
    if (selection.ids.length === 0) return [];
    query = query.where('id', 'in', [...selection.ids]);
  }
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    consumer: row.consumer,
    topic: row.topic,
    partition: row.kafka_partition,
    offset: row.kafka_offset,
    key: row.message_key,
    value: row.message_value,
    headers: row.header_names.map((name, i) => ({
      name: name.toString('utf8'),
      value: row.header_values[i] ?? null,
    })),
    reason: row.reason,
    parkedAt: row.parked_at,
  }));
}
