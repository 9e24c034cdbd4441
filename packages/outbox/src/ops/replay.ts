import { sql, type Kysely } from 'kysely';
import { OutboxError } from '../errors.ts';
import { outboxDb } from '../internal/views.ts';
import type { OutboxTables } from '../schema/tables.ts';

export interface ReplaySelection {
  /** Inclusive outbox id range. */
  readonly fromId?: string | number | bigint;
  readonly toId?: string | number | bigint;
  /** Inclusive `created_at` range. */
  readonly since?: Date;
  readonly until?: Date;
  readonly topic?: string;
}

/**
 * The publications of the CDC relay (outbox/cdc-relay.ts names them `outbox_cdc_<connector>`)
 * that publish this schema's `outbox_event`: while one exists, a CDC relay publishes the outbox.
 */
async function cdcPublications(db: Kysely<OutboxTables>): Promise<string[]> {
  const { rows } = await sql<{ pubname: string }>`
    SELECT pubname FROM pg_publication_tables
    WHERE schemaname = current_schema() AND tablename = 'outbox_event'
      AND starts_with(pubname, 'outbox_cdc_')
    ORDER BY pubname
  `.execute(db);
  return rows.map((row) => row.pubname);
}

/**
 * Queues published outbox rows again (sets `published_at` back to NULL), so the relay
 * republishes them through the normal path: in id order per key, ahead of newer rows of the
 * same key. For rebuilding read models, or after "Kafka lost its data". Consumers see
 * duplicates and drop them. Rows an operator skipped (never published) are left alone.
 *
 * Works in statements of whole partition keys: every selected row of a key is queued by the
 * same statement. Were a key's rows split over statements (chunks by id), a running relay
 * could publish the key's newer rows between them, after the first part of the replay and
 * before the rest. Returns how many rows were queued.
 *
 * For the polling relay only. A CDC relay publishes rows as they are inserted and never sets
 * `published_at`, so there is nothing to set back: with its publication in the database, this
 * throws `REPLAY_UNDER_CDC` and changes nothing (docs/runbook.md says what to do instead).
 */
export async function replayOutbox<DB extends OutboxTables>(
  dbIn: Kysely<DB>,
  selection: ReplaySelection,
  options: { readonly keysPerStatement?: number } = {},
): Promise<number> {
  const db = outboxDb(dbIn);
  const publications = await cdcPublications(db);
  if (publications.length > 0) {
    throw new OutboxError(
      'REPLAY_UNDER_CDC',
      `replay is for the polling relay: this outbox is published by CDC (publication ${publications.join(', ')}), ` +
        'which never sets published_at, so there is nothing to queue again. In CDC mode, republish ' +
        "every row the table holds: stop the relay role, run 'outbox cdc remove --connector NAME --yes' " +
        'and start the relay role again; its new connector snapshots the table (see "Replay after ' +
        'Kafka lost data" in docs/runbook.md). A selected range cannot be replayed in CDC mode.',
    );
  }
  const keysPerStatement = options.keysPerStatement ?? 1000;
  const selected = sql`
    published_at IS NOT NULL
    AND skipped_at IS NULL
    ${selection.fromId === undefined ? sql`` : sql`AND id >= ${String(selection.fromId)}::bigint`}
    ${selection.toId === undefined ? sql`` : sql`AND id <= ${String(selection.toId)}::bigint`}
    ${selection.since === undefined ? sql`` : sql`AND created_at >= ${selection.since}`}
    ${selection.until === undefined ? sql`` : sql`AND created_at <= ${selection.until}`}
    ${selection.topic === undefined ? sql`` : sql`AND topic = ${selection.topic}`}
  `;
  const keys = await sql<{ partition_key: string }>`
    SELECT DISTINCT partition_key FROM outbox_event WHERE ${selected}
  `.execute(db);
  let total = 0;
  for (let from = 0; from < keys.rows.length; from += keysPerStatement) {
    const chunk = keys.rows.slice(from, from + keysPerStatement).map((row) => row.partition_key);
    const result = await sql`
      UPDATE outbox_event SET published_at = NULL
      WHERE partition_key = ANY(${chunk}::text[]) AND ${selected}
    `.execute(db);
    total += Number(result.numAffectedRows ?? 0n);
  }
  return total;
}
