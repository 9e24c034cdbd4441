import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { enqueue, migrateOutbox, type OutboxTables } from '@outbox-inbox/outbox';
import type { BenchContext } from '../../context.ts';
import { benchDb } from '../../database.ts';
import type { Table } from '../../report.ts';
import { runRounds, runsOf } from '../../rounds.ts';
import { showSpread, spread } from '../../stats.ts';

interface Db extends OutboxTables {
  bench_order: { id: string; customer_id: string; amount: number; currency: string };
}

const variants = [
  'order row only',
  '+ outbox row, notify: false',
  '+ outbox row + NOTIFY (shipped)',
] as const;
type Variant = (typeof variants)[number];

async function setUpBreakdown(ctx: BenchContext): Promise<Kysely<Db>> {
  const url = await ctx.stack.createDatabase('bench_write_breakdown');
  const db = benchDb<Db>(url, ctx.settings.writeConnections);
  await migrateOutbox(db);
  await sql`CREATE TABLE bench_order (id uuid PRIMARY KEY, customer_id text NOT NULL,
    amount bigint NOT NULL, currency text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(
    db,
  );
  return db;
}

/** One write transaction of the variant, with the library's own `enqueue`. */
async function write(db: Kysely<Db>, variant: Variant): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const id = randomUUID();
    await trx
      .insertInto('bench_order')
      .values({ id, customer_id: 'c-42', amount: 4200, currency: 'EUR' })
      .execute();
    if (variant === 'order row only') return;
    await enqueue(
      trx,
      {
        eventType: 'OrderCreated',
        aggregateType: 'order',
        aggregateId: id,
        topic: 'order.events',
        partitionKey: id,
        payload: {
          schemaVersion: 1,
          orderId: id,
          customerId: 'c-42',
          amount: 4200,
          currency: 'EUR',
          createdAt: new Date().toISOString(),
        },
      },
      { notify: variant !== '+ outbox row, notify: false' },
    );
  });
}

/** `connections` clients writing back to back for `seconds`: transactions per second. */
async function writeRate(
  db: Kysely<Db>,
  connections: number,
  variant: Variant,
  seconds: number,
): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  const client = async () => {
    while (performance.now() < until) {
      await write(db, variant);
      done++;
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  return done / seconds;
}

function breakdownTable(connections: number, runs: ReadonlyMap<Variant, number[]>): Table {
  const base = spread(runsOf(runs, 'order row only')).median;
  return {
    caption: `Without HTTP: ${connections} clients writing transactions back to back through kysely (same pool size as connections)`,
    headers: ['transaction', 'tx/s median (min–max)', 'vs order row only'],
    rows: variants.map((variant) => {
      const s = spread(runsOf(runs, variant));
      return [variant, showSpread(s), `${((1 - s.median / base) * 100).toFixed(1)} % slower`];
    }),
  };
}

/**
 * Where B4's overhead goes, without HTTP: clients in this process run write transactions back
 * to back, rounds side by side. Separates the outbox INSERT (and its extra round trip) from the
 * NOTIFY (PostgreSQL serialises the commits of notifying transactions on one global lock).
 */
export async function writeBreakdown(ctx: BenchContext): Promise<Table> {
  const { settings } = ctx;
  const connections = settings.writeConnections;
  const db = await setUpBreakdown(ctx);
  try {
    for (const variant of variants) await writeRate(db, connections, variant, 1);
    const seconds = Math.max(2, settings.writeSeconds / 2);
    const runs = await runRounds(variants, settings.rounds, (variant) =>
      writeRate(db, connections, variant, seconds),
    );
    return breakdownTable(connections, runs);
  } finally {
    await db.destroy();
  }
}
