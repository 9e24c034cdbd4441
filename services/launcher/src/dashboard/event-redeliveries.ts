import type { OutboxTables } from '@outbox-inbox/outbox';
import { createDatabase, createLogger } from '@outbox-inbox/service-kit';
import type { Kysely } from 'kysely';
import type { ReadRedeliveries } from './latest-orders.ts';

export interface RedeliveryReader {
  readonly read: ReadRedeliveries;
  close(): Promise<void>;
}

/**
 * Reads how many repeats each event absorbed from the services' databases: the `redeliveries`
 * of its `inbox_event` row (payment-service's inbox stores the order events) and of its
 * `processed_event` rows (order-service's consumer dedups the payment events). Only rows that
 * absorbed a repeat come back, so the answer stays small. A query that does not answer within
 * `timeoutMs` fails the round instead of holding the dashboard's sampler.
 */
export function openRedeliveryReader(
  databaseUrls: readonly string[],
  timeoutMs: number,
): RedeliveryReader {
  const logger = createLogger({ service: 'dashboard', level: 'silent' });
  const databases = databaseUrls.map((url) =>
    createDatabase<OutboxTables>({ url, poolSize: 2, logger, connectTimeoutMs: timeoutMs }),
  );
  return {
    async read(eventIds) {
      const counts = new Map<string, number>();
      if (eventIds.length === 0) return counts;
      const rows = await Promise.all(
        databases.map((db) => withDeadline(repeatedEvents(db, eventIds), timeoutMs)),
      );
      for (const row of rows.flat()) {
        counts.set(row.event_id, (counts.get(row.event_id) ?? 0) + row.redeliveries);
      }
      return counts;
    },
    async close() {
      await Promise.all(databases.map((db) => db.destroy()));
    },
  };
}

function repeatedEvents(
  db: Kysely<OutboxTables>,
  eventIds: readonly string[],
): Promise<{ event_id: string; redeliveries: number }[]> {
  return db
    .selectFrom('inbox_event')
    .select(['event_id', 'redeliveries'])
    .where('event_id', 'in', eventIds)
    .where('redeliveries', '>', 0)
    .unionAll(
      db
        .selectFrom('processed_event')
        .select(['event_id', 'redeliveries'])
        .where('event_id', 'in', eventIds)
        .where('redeliveries', '>', 0),
    )
    .execute();
}

async function withDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from the database within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
