import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { sql, type Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import { EVENT_HEADERS } from '../kafka/event-headers.ts';
import type { OutboxMetrics } from '../operations/metrics.ts';
import type { OutboxTables } from '../schema/tables.ts';
import { configureBatchTransaction } from './batch-transaction.ts';
import { claimBatch, type ClaimedEvent } from './claim-batch.ts';
import type { RelayBatchEvent, RelayOptions } from './relay-options.ts';

/** The relay's producer: idempotent, acks -1, one request in flight (per-partition order). */
export function createRelayProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    // kafkajs keeps 5 retries with long waits by default; the relay retries in its own loop.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}

export interface PublishDeps {
  readonly db: Kysely<OutboxTables>;
  readonly producer: Producer;
  readonly options: RelayOptions;
  readonly metrics?: OutboxMetrics | undefined;
}

/**
 * One relay step: claim a batch, send it with one `sendBatch`, mark it published, commit.
 * Any failure rolls the transaction back, so no row is marked published unless Kafka
 * acknowledged it. Returns how many events were published.
 */
export async function publishBatch(deps: PublishDeps): Promise<number> {
  const { options } = deps;
  const started = performance.now();
  const published = await deps.db.transaction().execute(async (trx) => {
    await configureBatchTransaction(trx, options);
    const batch = await claimBatch(trx, options);
    if (batch.length === 0) return 0;
    await withTimeout(
      deps.producer.sendBatch({
        topicMessages: groupByTopic(batch),
        acks: -1,
        timeout: options.sendTimeoutMs,
      }),
      options.sendTimeoutMs,
    );
    await options.hooks.afterPublish?.(batch.map(toBatchEvent));
    await trx
      .updateTable('outbox_event')
      .set({ published_at: sql<Date>`now()` })
      .where(sql<boolean>`id = ANY(${batch.map((row) => row.id)}::bigint[])`)
      .execute();
    return batch.length;
  });
  if (published > 0 && deps.metrics) {
    deps.metrics.publishedTotal.inc(published);
    deps.metrics.batchSize.observe(published);
    deps.metrics.batchDurationSeconds.observe((performance.now() - started) / 1000);
  }
  return published;
}

/** Kafka messages, grouped by topic, each topic's messages in batch (id) order. */
function groupByTopic(batch: readonly ClaimedEvent[]): { topic: string; messages: Message[] }[] {
  const byTopic = new Map<string, Message[]>();
  for (const row of batch) {
    let messages = byTopic.get(row.topic);
    if (messages === undefined) byTopic.set(row.topic, (messages = []));
    messages.push({
      key: row.partition_key,
      value: row.payload,
      headers: {
        ...row.headers,
        [EVENT_HEADERS.eventId]: row.event_id,
        [EVENT_HEADERS.eventType]: row.event_type,
        [EVENT_HEADERS.aggregateType]: row.aggregate_type,
        [EVENT_HEADERS.aggregateId]: row.aggregate_id,
        [EVENT_HEADERS.occurredAt]: row.created_at.toISOString(),
      },
    });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

function toBatchEvent(row: ClaimedEvent): RelayBatchEvent {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    topic: row.topic,
    partitionKey: row.partition_key,
  };
}

/** Rejects after `ms`; the row locks are released by the rollback that follows. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutboxError('SEND_TIMEOUT', `Kafka did not acknowledge within ${ms} ms`)),
      ms,
    );
  });
  // The abandoned send may still fail later; that outcome no longer matters.
  promise.catch(() => undefined);
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
