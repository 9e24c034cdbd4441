import { pollUntil } from '@outbox-inbox/infra';
import { expect, it } from 'vitest';
import { expectInvariantsHeld } from '../src/invariants/expect-held.ts';
import { completedRetentionRuns, scrapeMetrics } from '../src/role-probes.ts';
import { runScenario, traffic, type FaultContext } from '../src/scenario.ts';
import type { System } from '../src/system.ts';

/** Windows far shorter than the scenario: retention deletes while orders flow and faults hit. */
const outboxWindowSeconds = 1;
/**
 * The dedup windows stay longer than any redelivery here (nothing kills a consumer), or a
 * redelivered event would be stored and applied again: the trade-off the runbook describes.
 */
const dedupWindowSeconds = 10;

/** Runs the service's retention role completed so far; -1 while it does not answer. */
async function retentionRunsSoFar(system: System, service: string): Promise<number> {
  const role = system.roles.find((one) => one.role === 'retention' && one.service.name === service);
  if (role === undefined) throw new Error(`no retention role in ${service}`);
  const text = await scrapeMetrics(role);
  if (text === undefined) return -1;
  return completedRetentionRuns(text);
}

/**
 * Holds `role` stopped until rows it would have finished are older than the retention window,
 * then through two retention runs: the overdue rows were there to take. Returns how many of
 * them retention took meanwhile (0 is the guarantee).
 */
async function overdueRowsTaken(
  context: FaultContext,
  options: {
    role: string;
    service: string;
    table: 'outbox_event' | 'inbox_event';
    pool: System['orderDb'];
    /** The key of every row the stopped role would have finished, past the window. */
    overdueKeys: string;
  },
): Promise<number> {
  const { system, supervisor, stop, fault } = context;
  const keyColumn = options.table === 'outbox_event' ? 'id' : 'event_id';
  supervisor.hold(options.role);
  await stop(options.role);
  const overdue = await pollUntil(
    async () => {
      const { rows } = await options.pool.query<{ key: string }>(options.overdueKeys);
      // A backlog, not one row that just crossed the line.
      return rows.length >= 20 ? rows.map((row) => row.key) : undefined;
    },
    { timeoutMs: 60_000, description: `${options.table} rows older than the window, not done` },
  );
  // Two whole runs after the sighting: at least one started after the rows were overdue.
  const runsBefore = await retentionRunsSoFar(system, options.service);
  await pollUntil(
    async () => (await retentionRunsSoFar(system, options.service)) >= runsBefore + 2,
    {
      timeoutMs: 60_000,
      description: `two retention runs of ${options.service} meanwhile`,
    },
  );
  const { rows } = await options.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${options.table} WHERE ${keyColumn}::text = ANY($1::text[])`,
    [overdue],
  );
  const kept = Number(rows[0]?.n ?? 0);
  fault(
    `${options.role} stopped: ${kept} of ${overdue.length} overdue ${options.table} rows kept through two retention runs`,
  );
  supervisor.release(options.role);
  await pollUntil(() => system.stack.isRunning(options.role), {
    timeoutMs: 60_000,
    description: `${options.role} back`,
  });
  return overdue.length - kept;
}

it('retention with windows shorter than the scenario never takes an unpublished or unprocessed row; nothing is lost or applied twice', async () => {
  const taken: number[] = [];
  const result = await runScenario('15 retention under faults', {
    system: {
      settings: {
        RETENTION_INTERVAL_SECONDS: '1',
        RETENTION_OUTBOX_WINDOW_SECONDS: String(outboxWindowSeconds),
        RETENTION_PARKED_WINDOW_SECONDS: String(outboxWindowSeconds),
        RETENTION_PROCESSED_EVENT_WINDOW_SECONDS: String(dedupWindowSeconds),
        RETENTION_INBOX_WINDOW_SECONDS: String(dedupWindowSeconds),
      },
    },
    expect: {
      shortRetention: {
        'order-service': ['outbox_event', 'processed_event'],
        'payment-service': ['outbox_event', 'inbox_event'],
      },
    },
    inject: async (context) => {
      const { system } = context;
      // Long enough for processed rows to pass the dedup window and be deleted.
      await traffic(context, dedupWindowSeconds + 2);
      // The order relay stopped: its rows stay unpublished past the outbox window.
      taken.push(
        await overdueRowsTaken(context, {
          role: 'order-relay',
          service: 'order-service',
          table: 'outbox_event',
          pool: system.orderDb,
          overdueKeys: `SELECT id::text AS key FROM outbox_event
            WHERE published_at IS NULL
              AND created_at < now() - interval '${3 * outboxWindowSeconds} seconds'`,
        }),
      );
      await traffic(context, 2);
      // The payment processor stopped: inbox rows stay unprocessed past the inbox window.
      taken.push(
        await overdueRowsTaken(context, {
          role: 'payment-processor',
          service: 'payment-service',
          table: 'inbox_event',
          pool: system.paymentDb,
          overdueKeys: `SELECT event_id::text AS key FROM inbox_event
            WHERE NOT processed
              AND received_at < now() - interval '${dedupWindowSeconds + 2} seconds'`,
        }),
      );
      await traffic(context, 2);
    },
  });

  expectInvariantsHeld(result.invariants);
  expect(result.unexpectedRestarts).toEqual([]);
  // No overdue row went while its worker was away.
  expect(taken).toEqual([0, 0]);
});
