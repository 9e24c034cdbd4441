import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { enqueue, migrateOutbox, type OutboxTables } from '@outbox-inbox/outbox';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import type { Table } from '../report.ts';
import { showSpread, spread } from '../stats.ts';

interface Db extends OutboxTables {
  bench_order: { id: string; customer_id: string; amount: number; currency: string };
}

const variants = [
  'order row only',
  '+ outbox row, notify: false',
  '+ outbox row + NOTIFY (shipped)',
] as const;
type Variant = (typeof variants)[number];

/**
 * Where B4's overhead goes, without HTTP: `connections` clients in this process run write
 * transactions back to back for `seconds`, with the library's own `enqueue`. Separates the
 * outbox INSERT (and its extra round trip) from the NOTIFY (PostgreSQL serialises the commits
 * of notifying transactions on one global lock).
 */
export async function writeBreakdown(ctx: BenchContext): Promise<Table> {
  const { settings } = ctx;
  const url = await ctx.stack.createDatabase('bench_write_breakdown');
  const db = benchDb<Db>(url, settings.writeConnections);
  try {
    await migrateOutbox(db);
    await sql`CREATE TABLE bench_order (id uuid PRIMARY KEY, customer_id text NOT NULL,
      amount bigint NOT NULL, currency text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(
      db,
    );
    const write = async (trxDb: Kysely<Db>, variant: Variant) =>
      trxDb.transaction().execute(async (trx) => {
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
    const run = async (variant: Variant, seconds: number): Promise<number> => {
      const until = performance.now() + seconds * 1000;
      let done = 0;
      await Promise.all(
        Array.from({ length: settings.writeConnections }, async () => {
          while (performance.now() < until) {
            await write(db, variant);
            done++;
          }
        }),
      );
      return done / seconds;
    };
    for (const variant of variants) await run(variant, 1);
    const runs = new Map<Variant, number[]>(variants.map((v) => [v, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order)
        runs.get(variant)?.push(await run(variant, Math.max(2, settings.writeSeconds / 2)));
    }
    const base = spread(runs.get('order row only') ?? []).median;
    return {
      caption: `Without HTTP: ${settings.writeConnections} clients writing transactions back to back through kysely (same pool size as connections)`,
      headers: ['transaction', 'tx/s median (min–max)', 'vs order row only'],
      rows: variants.map((variant) => {
        const s = spread(runs.get(variant) ?? []);
        return [variant, showSpread(s), `${((1 - s.median / base) * 100).toFixed(1)} % slower`];
      }),
    };
  } finally {
    await db.destroy();
  }
}
