import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { OutboxTables } from '@outbox-inbox/outbox';
import type { BenchContext } from '../../context.ts';
import { rssMiB } from '../../rss.ts';
import type { RoleHandle } from '../../services.ts';
import { fixed, int, sleep } from '../../stats.ts';

/** Past this, B6 stops waiting and reports what it saw. */
export const CAP_SECONDS = 600;

/** One second of B6: resident set and V8 heap of both processes, in MiB. */
export interface Sample {
  readonly second: number;
  readonly relay: number | undefined;
  readonly consumer: number | undefined;
  readonly relayHeap: number | undefined;
  readonly consumerHeap: number | undefined;
}

export interface MemoryRun {
  readonly samples: readonly Sample[];
  /** Seconds until the relay published the whole backlog; undefined past the cap. */
  readonly relayDone: number | undefined;
  /** Seconds until the inbox held the whole backlog; undefined past the cap. */
  readonly consumerDone: number | undefined;
}

/** V8 heap in use (MiB) from a role's /metrics (prom-client's default Node metrics). */
async function heapUsedMiB(baseUrl: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const bytes = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    return bytes === undefined ? undefined : Number(bytes) / 2 ** 20;
  } catch {
    return undefined;
  }
}

async function sample(second: number, relay: RoleHandle, consumer: RoleHandle): Promise<Sample> {
  const [relayHeap, consumerHeap] = await Promise.all([
    heapUsedMiB(relay.url),
    heapUsedMiB(consumer.url),
  ]);
  return {
    second,
    relay: rssMiB(relay.pid()),
    consumer: rssMiB(consumer.pid()),
    relayHeap,
    consumerHeap,
  };
}

async function count(
  db: Kysely<OutboxTables>,
  query: RawBuilder<{ n: number }>,
): Promise<number | undefined> {
  return (await query.execute(db)).rows[0]?.n;
}

/**
 * Samples both processes every second until the relay has published the backlog and the inbox
 * holds all of it (checked every 5 s), or the cap passes.
 */
export async function sampleUntilDrained(
  ctx: BenchContext,
  processes: { relay: RoleHandle; consumer: RoleHandle; started: number },
  databases: { orders: Kysely<OutboxTables>; payments: Kysely<OutboxTables>; events: number },
): Promise<MemoryRun> {
  const samples: Sample[] = [];
  let relayDone: number | undefined;
  let consumerDone: number | undefined;
  let lastCheck = 0;
  for (;;) {
    const second = (performance.now() - processes.started) / 1000;
    samples.push(await sample(second, processes.relay, processes.consumer));
    if (second - lastCheck >= 5 || second > CAP_SECONDS) {
      lastCheck = second;
      const unpublished = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM outbox_event WHERE published_at IS NULL`;
      if (relayDone === undefined && (await count(databases.orders, unpublished)) === 0) {
        relayDone = second;
      }
      const stored = sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_event`;
      const n = (await count(databases.payments, stored)) ?? 0;
      if (consumerDone === undefined && n >= databases.events) consumerDone = second;
      const last = samples.at(-1);
      ctx.log(
        `B6 ${fixed(second, 0)} s: relay ${relayDone === undefined ? 'draining' : 'done'}, inbox ${int(n)}, RSS relay ${fixed(last?.relay ?? NaN, 0)} MiB, consumer ${fixed(last?.consumer ?? NaN, 0)} MiB`,
      );
      if ((relayDone !== undefined && consumerDone !== undefined) || second > CAP_SECONDS) break;
    }
    await sleep(1000);
  }
  return { samples, relayDone, consumerDone };
}
