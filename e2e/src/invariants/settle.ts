import { pollUntil } from '@outbox-inbox/infra';
import type { LoadResult } from '../load-generator.ts';
import type { System } from '../system.ts';
import { CdcSlotMarks } from './cdc-slots.ts';

type Pool = System['orderDb'];

async function rows<T>(pool: Pool, query: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(query, values)).rows as T[];
}

async function count(pool: Pool, query: string): Promise<number> {
  const [row] = await rows<{ n: string }>(pool, query);
  return Number(row?.n ?? 0);
}

/**
 * What must be true once the system has settled; each entry is what is missing. In CDC mode the
 * outboxes are drained when their slots confirmed the WAL position of the first poll at which
 * everything else was settled (no event is written after that).
 */
async function unsettled(system: System, load: LoadResult, slots: CdcSlotMarks): Promise<string[]> {
  const waiting: string[] = [];
  const cdc = system.relayMode === 'cdc';
  const unpublished = 'SELECT count(*) AS n FROM outbox_event WHERE published_at IS NULL';
  const orderBacklog = cdc ? 0 : await count(system.orderDb, unpublished);
  const paymentBacklog = cdc ? 0 : await count(system.paymentDb, unpublished);
  const inboxBacklog = await count(
    system.paymentDb,
    'SELECT count(*) AS n FROM inbox_event WHERE NOT processed AND dead_at IS NULL',
  );
  if (orderBacklog > 0) waiting.push(`${orderBacklog} order outbox rows unpublished`);
  if (paymentBacklog > 0) waiting.push(`${paymentBacklog} payment outbox rows unpublished`);
  if (inboxBacklog > 0) waiting.push(`${inboxBacklog} inbox rows unprocessed`);
  const open = await count(
    system.orderDb,
    `SELECT count(*) AS n FROM orders
      WHERE status = 'PENDING' OR (status = 'CANCELLED' AND payment_status IS DISTINCT FROM 'REFUNDED' AND payment_status IS DISTINCT FROM 'FAILED')`,
  );
  if (open > 0) waiting.push(`${open} orders not final`);
  if (load.accepted.size === 0) waiting.push('no order accepted');
  if (!cdc) return waiting;
  if (waiting.length > 0) {
    slots.forget();
    return waiting;
  }
  if (!slots.marked) {
    await slots.mark([system.orderDb, system.paymentDb]);
    return ['the CDC slots to confirm what was written'];
  }
  return slots.behind(
    new Map([
      [system.orderDb, 'order'],
      [system.paymentDb, 'payment'],
    ]),
  );
}

/**
 * Why inbox rows may be holding orders back, for the message of a system that did not settle:
 * rows given up on (dead) and rows being retried, with the handler's last error. Not a
 * condition of settling: some scenarios leave dead rows on purpose.
 */
async function inboxTrouble(system: System): Promise<string[]> {
  const [row] = await rows<{ dead: string; retrying: string; last_error: string | null }>(
    system.paymentDb,
    `SELECT count(*) FILTER (WHERE dead_at IS NOT NULL) AS dead,
            count(*) FILTER (WHERE dead_at IS NULL AND attempts > 1) AS retrying,
            (array_agg(last_error ORDER BY attempts DESC) FILTER (WHERE last_error IS NOT NULL))[1]
              AS last_error
       FROM inbox_event WHERE NOT processed`,
  );
  const dead = Number(row?.dead ?? 0);
  const retrying = Number(row?.retrying ?? 0);
  if (dead === 0 && retrying === 0) return [];
  const error = row?.last_error ? `, last error: ${row.last_error}` : '';
  return [`inbox: ${dead} rows dead, ${retrying} being retried${error}`];
}

/** What was still missing at the last poll, and what the inbox says about it. */
async function why(system: System, missing: readonly string[]): Promise<string> {
  return [...missing, ...(await inboxTrouble(system))].join('; ');
}

/**
 * How long the system may take to settle after the last fault, unless a scenario says: room
 * for every client to reconnect after Kafka comes back (their backoff) and for the backlog to
 * drain, on two shared cores.
 */
export const defaultDrainBoundMs = 45_000;

/**
 * Polls until every accepted order is final and every queue is empty; returns the seconds it
 * took. Fails once `boundMs` passed since the last fault (`lastFaultAt()`, epoch ms, read on
 * every poll: a kill point may still strike while the backlog drains) or after `timeoutMs`.
 */
export async function waitUntilSettled(
  system: System,
  load: LoadResult,
  options: { boundMs?: number; lastFaultAt?: () => number; timeoutMs?: number } = {},
): Promise<number> {
  const started = Date.now();
  const boundMs = options.boundMs ?? defaultDrainBoundMs;
  const lastFaultAt = (): number => Math.max(started, options.lastFaultAt?.() ?? started);
  const timeoutMs = options.timeoutMs ?? 180_000;
  let last: string[] = [];
  const slots = new CdcSlotMarks();
  let outcome: 'settled' | 'overdue';
  try {
    outcome = await pollUntil(
      async () => {
        last = await unsettled(system, load, slots);
        if (last.length === 0) return 'settled' as const;
        return Date.now() - lastFaultAt() > boundMs ? ('overdue' as const) : false;
      },
      { timeoutMs, intervalMs: 250, description: 'the system to settle' },
    );
  } catch (error) {
    throw new Error(
      `the system did not settle within ${timeoutMs / 1000} s: ${await why(system, last)}`,
      { cause: error },
    );
  }
  if (outcome === 'overdue') {
    throw new Error(
      `the system did not settle within ${boundMs / 1000} s of the last fault: ${await why(system, last)}`,
    );
  }
  return (Date.now() - started) / 1000;
}
