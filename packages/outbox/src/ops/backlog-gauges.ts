import { sql, type Kysely } from 'kysely';
import { Gauge, type Registry } from 'prom-client';
import { heldByFence } from '../relay/commit-order-fence.ts';
import type { OutboxTables } from '../schema/tables.ts';

interface Snapshot {
  unpublished: number;
  oldestUnpublishedAge: number;
  fenceHeld: number;
  oldestFenceHeldAge: number;
  inboxBacklog: number;
  oldestUnprocessedAge: number;
  inboxDead: number;
  parked: number;
  outboxFailed: number;
}

const EMPTY: Snapshot = Object.freeze({
  unpublished: 0,
  oldestUnpublishedAge: 0,
  fenceHeld: 0,
  oldestFenceHeldAge: 0,
  inboxBacklog: 0,
  oldestUnprocessedAge: 0,
  inboxDead: 0,
  parked: 0,
  outboxFailed: 0,
});

/** Longest a scrape waits for the backlog query before it answers with the last values. */
const SNAPSHOT_TIMEOUT_MS = 2000;

export const DEFAULT_BACKLOG_CACHE_MS = 2000;

/**
 * The backlog query's last answer. One query serves every gauge of a scrape, concurrent
 * scrapes, and every scrape within `cacheMs` of it; a failed query keeps the last values.
 */
class BacklogSnapshots {
  readonly #db: Kysely<OutboxTables>;
  readonly #publishedBy: 'relay' | 'cdc';
  readonly #cacheMs: number;
  #last: Snapshot = EMPTY;
  #readAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<Snapshot> | undefined;

  constructor(db: Kysely<OutboxTables>, publishedBy: 'relay' | 'cdc', cacheMs: number) {
    this.#db = db;
    this.#publishedBy = publishedBy;
    this.#cacheMs = cacheMs;
  }

  async read(): Promise<Snapshot> {
    if (Date.now() - this.#readAt < this.#cacheMs) return this.#last;
    this.#pending ??= readSnapshot(this.#db, this.#publishedBy)
      .then((snapshot) => {
        this.#readAt = Date.now();
        return (this.#last = snapshot);
      })
      .catch(() => this.#last)
      .finally(() => (this.#pending = undefined));
    // A query stuck behind a lock must not hang the scrape: answer with the last values.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Snapshot>((resolve) => {
      timer = setTimeout(() => resolve(this.#last), SNAPSHOT_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.#pending, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function registerBacklogGauges(
  registry: Registry,
  db: Kysely<OutboxTables>,
  publishedBy: 'relay' | 'cdc',
  cacheMs: number,
): void {
  const snapshots = new BacklogSnapshots(db, publishedBy, cacheMs);
  const read = () => snapshots.read();
  const gauge = (name: string, help: string, pick: (s: Snapshot) => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(pick(await read()));
      },
    });
  };
  if (publishedBy === 'relay') {
    gauge('outbox_unpublished_events', 'Outbox rows not yet published', (s) => s.unpublished);
    gauge(
      'outbox_oldest_unpublished_age_seconds',
      'Age of the oldest unpublished outbox row (0 when none)',
      (s) => s.oldestUnpublishedAge,
    );
    gauge(
      'outbox_fence_held_events',
      'Committed outbox rows the commit-order fence holds back for an older outbox writer still open',
      (s) => s.fenceHeld,
    );
    gauge(
      'outbox_fence_held_oldest_age_seconds',
      'Age of the oldest outbox row the commit-order fence holds back (0 when none)',
      (s) => s.oldestFenceHeldAge,
    );
  }
  gauge(
    'inbox_backlog_events',
    'Inbox rows waiting to be processed (not dead)',
    (s) => s.inboxBacklog,
  );
  gauge(
    'inbox_oldest_unprocessed_age_seconds',
    'Age of the oldest inbox row waiting to be processed (0 when none)',
    (s) => s.oldestUnprocessedAge,
  );
  gauge('inbox_dead_events', 'Inbox rows marked dead, waiting for an operator', (s) => s.inboxDead);
  gauge('parked_messages', 'Parked Kafka messages in parked_message', (s) => s.parked);
  gauge(
    'outbox_failed_events',
    'Outbox rows set aside as FAILED, holding back their keys until retried or skipped',
    (s) => s.outboxFailed,
  );
}

async function readSnapshot(
  db: Kysely<OutboxTables>,
  publishedBy: 'relay' | 'cdc',
): Promise<Snapshot> {
  // In CDC mode every row is "unpublished": counting them would scan the whole table.
  const unpublished =
    publishedBy === 'relay'
      ? sql`(SELECT count(*) FROM outbox_event WHERE published_at IS NULL)`
      : sql`0`;
  const oldestUnpublished =
    publishedBy === 'relay'
      ? sql`(SELECT extract(epoch FROM now() - min(created_at))::float8
           FROM outbox_event WHERE published_at IS NULL)`
      : sql`NULL::float8`;
  // One pass over the unpublished rows, with the fence (one pg_locks read) computed once.
  const fenceHeld =
    publishedBy === 'relay'
      ? sql`(SELECT count(*) AS held, extract(epoch FROM now() - min(created_at))::float8 AS oldest
           FROM outbox_event e
           WHERE e.published_at IS NULL AND e.failed_at IS NULL AND ${heldByFence('e')})`
      : sql`(SELECT 0 AS held, NULL::float8 AS oldest)`;
  const result = await sql<{
    unpublished: string;
    oldest_unpublished_age: number | null;
    fence_held: string;
    oldest_fence_held_age: number | null;
    inbox_backlog: string;
    oldest_unprocessed_age: number | null;
    inbox_dead: string;
    parked: string;
    outbox_failed: string;
  }>`
    SELECT
      ${unpublished} AS unpublished,
      ${oldestUnpublished} AS oldest_unpublished_age,
      fence.held AS fence_held,
      fence.oldest AS oldest_fence_held_age,
      (SELECT count(*) FROM inbox_event WHERE NOT processed AND dead_at IS NULL) AS inbox_backlog,
      (SELECT extract(epoch FROM now() - min(received_at))::float8
         FROM inbox_event WHERE NOT processed AND dead_at IS NULL) AS oldest_unprocessed_age,
      (SELECT count(*) FROM inbox_event WHERE NOT processed AND dead_at IS NOT NULL) AS inbox_dead,
      (SELECT count(*) FROM parked_message) AS parked,
      (SELECT count(*) FROM outbox_event
         WHERE failed_at IS NOT NULL AND published_at IS NULL) AS outbox_failed
    FROM ${fenceHeld} AS fence
  `.execute(db);
  const row = result.rows[0];
  if (row === undefined) throw new Error('metrics query returned no row');
  return {
    unpublished: Number(row.unpublished),
    oldestUnpublishedAge: row.oldest_unpublished_age ?? 0,
    fenceHeld: Number(row.fence_held),
    oldestFenceHeldAge: row.oldest_fence_held_age ?? 0,
    inboxBacklog: Number(row.inbox_backlog),
    oldestUnprocessedAge: row.oldest_unprocessed_age ?? 0,
    inboxDead: Number(row.inbox_dead),
    parked: Number(row.parked),
    outboxFailed: Number(row.outbox_failed),
  };
}
