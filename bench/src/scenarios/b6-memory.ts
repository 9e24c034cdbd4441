import { sql } from 'kysely';
import type { OutboxTables } from '@outbox-inbox/outbox';
import { writeBacklog } from '../backlog.ts';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { freshTopics } from '../kafka.ts';
import type { Section } from '../report.ts';
import { rssMiB } from '../rss.ts';
import { migrateService, startRole } from '../services.ts';
import { fixed, int, sleep } from '../stats.ts';

const CHUNK = 100_000;
const CAP_SECONDS = 600;

interface Sample {
  readonly second: number;
  readonly relay: number | undefined;
  readonly consumer: number | undefined;
  readonly relayHeap: number | undefined;
  readonly consumerHeap: number | undefined;
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

/**
 * B6: order-service's relay process drains a 1M-event backlog into order.events while
 * payment-service's consumer process (the inbox writer) ingests it; the resident memory of
 * both is sampled every second from /proc until both are done.
 */
export async function memory(ctx: BenchContext): Promise<Section> {
  const { settings, stack } = ctx;
  const events = settings.memoryEvents;
  const ordersUrl = await stack.createDatabase('bench_memory_orders');
  const paymentsUrl = await stack.createDatabase('bench_memory_payments');
  migrateService('order', ordersUrl);
  migrateService('payment', paymentsUrl);
  await freshTopics(ctx.kafka, [
    { topic: 'order.events', partitions: 3 },
    { topic: 'payment.events', partitions: 3 },
  ]);
  const orders = benchDb<OutboxTables>(ordersUrl);
  const payments = benchDb<OutboxTables>(paymentsUrl);
  try {
    const inserting = performance.now();
    for (let written = 0; written < events; written += CHUNK) {
      await writeBacklog(orders, {
        events: Math.min(CHUNK, events - written),
        keys: settings.keys,
        topic: 'order.events',
      });
      ctx.log(`B6 backlog ${int(Math.min(events, written + CHUNK))} / ${int(events)}`);
    }
    await sql`VACUUM ANALYZE outbox_event`.execute(orders);
    const insertSeconds = (performance.now() - inserting) / 1000;

    const started = performance.now();
    const [relay, consumer] = await Promise.all([
      startRole(stack, {
        component: 'b6-order-relay',
        service: 'order',
        role: 'relay',
        databaseUrl: ordersUrl,
        env: { RELAY_BATCH_SIZE: String(settings.batchSize) },
      }),
      startRole(stack, {
        component: 'b6-payment-consumer',
        service: 'payment',
        role: 'consumer',
        databaseUrl: paymentsUrl,
      }),
    ]);
    const samples: Sample[] = [];
    let relayDone: number | undefined;
    let consumerDone: number | undefined;
    let lastCheck = 0;
    for (;;) {
      const second = (performance.now() - started) / 1000;
      const [relayHeap, consumerHeap] = await Promise.all([
        heapUsedMiB(relay.url),
        heapUsedMiB(consumer.url),
      ]);
      samples.push({
        second,
        relay: rssMiB(relay.pid()),
        consumer: rssMiB(consumer.pid()),
        relayHeap,
        consumerHeap,
      });
      if (second - lastCheck >= 5 || second > CAP_SECONDS) {
        lastCheck = second;
        if (relayDone === undefined) {
          const left = await sql<{ n: number }>`
            SELECT count(*)::int AS n FROM outbox_event WHERE published_at IS NULL`.execute(orders);
          if ((left.rows[0]?.n ?? 1) === 0) relayDone = second;
        }
        const stored = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_event`.execute(
          payments,
        );
        const n = stored.rows[0]?.n ?? 0;
        if (consumerDone === undefined && n >= events) consumerDone = second;
        ctx.log(
          `B6 ${fixed(second, 0)} s: relay ${relayDone === undefined ? 'draining' : 'done'}, inbox ${int(n)}, RSS relay ${fixed(samples.at(-1)?.relay ?? NaN, 0)} MiB, consumer ${fixed(samples.at(-1)?.consumer ?? NaN, 0)} MiB`,
        );
        if ((relayDone !== undefined && consumerDone !== undefined) || second > CAP_SECONDS) break;
      }
      await sleep(1000);
    }
    await Promise.all([relay.stop(), consumer.stop()]);

    const describe = (pick: (s: Sample) => number | undefined, until: number | undefined) => {
      const values = samples
        .filter((s) => until === undefined || s.second <= until)
        .map(pick)
        .filter((v): v is number => v !== undefined);
      return {
        first: values[0] ?? NaN,
        max: Math.max(...values),
        last: values.at(-1) ?? NaN,
        values,
      };
    };
    const relayRss = describe((s) => s.relay, relayDone);
    const consumerRss = describe((s) => s.consumer, consumerDone);
    const relayHeap = describe((s) => s.relayHeap, relayDone);
    const consumerHeap = describe((s) => s.consumerHeap, consumerDone);
    // RSS at each tenth of the relay's drain: "flat" is visible at a glance.
    const tenths = Array.from({ length: 11 }, (_, i) => i / 10);
    const at = (
      fraction: number,
      until: number | undefined,
      pick: (s: Sample) => number | undefined,
    ) => {
      const end = until ?? samples.at(-1)?.second ?? 0;
      const sample = samples.find((s) => s.second >= fraction * end) ?? samples.at(-1);
      const value = sample ? pick(sample) : undefined;
      return value === undefined ? 'n/a' : fixed(value, 0);
    };
    return {
      id: 'B6',
      title: `Memory: relay and consumer resident set while draining a ${int(events)}-event backlog`,
      tables: [
        {
          headers: [
            'process',
            'done after s',
            'events/s',
            'RSS MiB at start',
            'max',
            'at end',
            'V8 heap used MiB max',
            'at end',
          ],
          rows: [
            [
              'order-service relay',
              relayDone === undefined ? `> ${CAP_SECONDS}` : fixed(relayDone, 0),
              relayDone ? int(events / relayDone) : 'n/a',
              fixed(relayRss.first, 0),
              fixed(relayRss.max, 0),
              fixed(relayRss.last, 0),
              fixed(relayHeap.max, 0),
              fixed(relayHeap.last, 0),
            ],
            [
              'payment-service consumer (inbox writer)',
              consumerDone === undefined ? `> ${CAP_SECONDS}` : fixed(consumerDone, 0),
              consumerDone ? int(events / consumerDone) : 'n/a',
              fixed(consumerRss.first, 0),
              fixed(consumerRss.max, 0),
              fixed(consumerRss.last, 0),
              fixed(consumerHeap.max, 0),
              fixed(consumerHeap.last, 0),
            ],
          ],
        },
        {
          caption: "RSS (MiB) at each tenth of each process's own run",
          headers: ['process', ...tenths.map((t) => `${t * 100}%`)],
          rows: [
            ['relay', ...tenths.map((t) => at(t, relayDone, (s) => s.relay))],
            ['consumer', ...tenths.map((t) => at(t, consumerDone, (s) => s.consumer))],
            ['relay V8 heap used', ...tenths.map((t) => at(t, relayDone, (s) => s.relayHeap))],
            [
              'consumer V8 heap used',
              ...tenths.map((t) => at(t, consumerDone, (s) => s.consumerHeap)),
            ],
          ],
        },
      ],
      notes: [
        `Backlog written before the processes start (${fixed(insertSeconds, 0)} s, ${CHUNK / 1000}k rows per transaction, ${settings.keys} keys, ~500-byte payloads); relay batch ${settings.batchSize}, services' defaults otherwise; RSS from /proc/<pid>/status every second.`,
      ],
      targets: [
        {
          name: 'relay RSS flat, < 250 MB through the backlog',
          goal: '< 250 MB',
          measured: `max ${fixed((relayRss.max * 1024 * 1024) / 1e6, 0)} MB (start ${fixed((relayRss.first * 1024 * 1024) / 1e6, 0)} MB)`,
          met: (relayRss.max * 1024 * 1024) / 1e6 < 250,
        },
      ],
    };
  } finally {
    await Promise.all([orders.destroy(), payments.destroy()]);
  }
}
