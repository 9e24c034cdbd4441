import type { LoadResult } from '../load-generator.ts';
import { topics } from '@outbox-inbox/contracts';
import type { System } from '../system.ts';
import { completedRetentionRuns, metricSamples, scrapeMetrics } from '../role-probes.ts';
import { readWholeTopic } from '../topic-reader.ts';
import type { OutboxEntry, ParkedEntry, RetentionRuns, SystemSnapshot } from './snapshot.ts';

type Pool = System['orderDb'];

async function rows<T>(pool: Pool, query: string): Promise<T[]> {
  return (await pool.query(query)).rows as T[];
}

async function outbox(pool: Pool): Promise<OutboxEntry[]> {
  const found = await rows<{
    id: string;
    event_id: string;
    event_type: string;
    partition_key: string;
    published: boolean;
  }>(
    pool,
    `SELECT id, event_id, event_type, partition_key, published_at IS NOT NULL AS published
       FROM outbox_event ORDER BY id`,
  );
  return found.map((row) => ({
    id: BigInt(row.id),
    eventId: row.event_id,
    eventType: row.event_type,
    partitionKey: row.partition_key,
    published: row.published,
  }));
}

async function applications(pool: Pool, table: 'order_history' | 'payment_history') {
  const found = await rows<{ order_id: string; event_id: string; event_type: string }>(
    pool,
    `SELECT order_id, event_id, event_type FROM ${table} ORDER BY seq`,
  );
  return found.map((row) => ({
    orderId: row.order_id,
    eventId: row.event_id,
    eventType: row.event_type,
  }));
}

async function parked(pool: Pool, database: ParkedEntry['database']): Promise<ParkedEntry[]> {
  // Headers are stored as bytes (they may hold anything); `escape` reads any bytes as text.
  const found = await rows<{
    consumer: string;
    topic: string;
    kafka_partition: number;
    kafka_offset: string;
    reason: string;
    event_id: string | null;
  }>(
    pool,
    `SELECT consumer, topic, kafka_partition, kafka_offset, reason,
        encode(header_values[array_position(header_names, 'event_id'::bytea)], 'escape')
          AS event_id
       FROM parked_message ORDER BY id`,
  );
  return found.map((row) => ({
    database,
    consumer: row.consumer,
    topic: row.topic,
    partition: row.kafka_partition,
    offset: String(row.kafka_offset),
    reason: row.reason,
    eventId: row.event_id ?? undefined,
  }));
}

/** Completed runs and deleted rows reported by each retention role process (in its memory). */
async function retentionRuns(system: System): Promise<RetentionRuns[]> {
  const roles = system.roles.filter((role) => role.role === 'retention');
  return Promise.all(
    roles.map(async (role) => {
      const text = await scrapeMetrics(role, 5000);
      if (text === undefined)
        return { service: role.service.name, completed: undefined, deleted: {} };
      const completed = completedRetentionRuns(text);
      const deleted: Record<string, number> = {};
      for (const { labels, value } of metricSamples(text, 'outbox_retention_deleted_rows_total')) {
        const table = labels['table'] ?? '';
        deleted[table] = (deleted[table] ?? 0) + value;
      }
      return { service: role.service.name, completed, deleted };
    }),
  );
}

/** Reads both databases and both topics once, after the system settled. */
export async function readSnapshot(system: System, load: LoadResult): Promise<SystemSnapshot> {
  const [orders, payments, inbox] = await Promise.all([
    rows<{ id: string; status: string; payment_status: string | null }>(
      system.orderDb,
      'SELECT id, status, payment_status FROM orders',
    ),
    rows<{ order_id: string; status: string }>(
      system.paymentDb,
      'SELECT order_id, status FROM payments',
    ),
    rows<{
      event_id: string;
      partition_key: string;
      processed: boolean;
      dead: boolean;
      last_error: string | null;
    }>(
      system.paymentDb,
      'SELECT event_id, partition_key, processed, dead_at IS NOT NULL AS dead, last_error FROM inbox_event',
    ),
  ]);
  const brokers = system.stack.kafkaBrokers;
  const orderTopic = await readWholeTopic(brokers, topics.orderEvents);
  const paymentTopic = await readWholeTopic(brokers, topics.paymentEvents);
  // CDC marks no row published: a row is published when its event is on its topic.
  const published = (rows: OutboxEntry[], topic: readonly { eventId: string }[]) => {
    if (system.relayMode !== 'cdc') return rows;
    const onTopic = new Set(topic.map((message) => message.eventId));
    return rows.map((row) => ({ ...row, published: onTopic.has(row.eventId) }));
  };
  return {
    accepted: [...load.accepted.values()],
    orders: orders.map((row) => ({
      id: row.id,
      status: row.status,
      paymentStatus: row.payment_status,
    })),
    payments: payments.map((row) => ({ orderId: row.order_id, status: row.status })),
    orderOutbox: published(await outbox(system.orderDb), orderTopic),
    paymentOutbox: published(await outbox(system.paymentDb), paymentTopic),
    inbox: inbox.map((row) => ({
      eventId: row.event_id,
      partitionKey: row.partition_key,
      processed: row.processed,
      dead: row.dead,
      lastError: row.last_error ?? undefined,
    })),
    orderHistory: await applications(system.orderDb, 'order_history'),
    paymentHistory: await applications(system.paymentDb, 'payment_history'),
    parked: [
      ...(await parked(system.orderDb, 'orders')),
      ...(await parked(system.paymentDb, 'payments')),
    ],
    orderTopic,
    paymentTopic,
    retentionRuns: await retentionRuns(system),
  };
}
