import type { OutboxTables } from '@outbox-inbox/outbox';
import { clearOutbox, unpublishedLeft, writeBacklog } from '../backlog.ts';
import type { BenchContext } from '../context.ts';
import { benchDb } from '../database.ts';
import { freshTopics } from '../kafka.ts';
import type { Section } from '../report.ts';
import { migrateService, startRole, type RoleHandle } from '../services.ts';
import { fixed, int, showSpread, sleep, spread } from '../stats.ts';

const TOPIC = 'bench.scale';

/**
 * B2: 1, 2 and 4 order-service relay processes (`main.ts --roles relay`, the real role) drain
 * the same backlog. The relays are started first and idle; the backlog commits in one
 * transaction (NOTIFY at commit) and the clock runs from that commit until no unpublished
 * row is left, so process start-up is not counted.
 */
export async function relayScaling(ctx: BenchContext): Promise<Section> {
  const { settings } = ctx;
  const url = await ctx.stack.createDatabase('bench_scale');
  migrateService('order', url);
  const db = benchDb<OutboxTables>(url);
  try {
    await freshTopics(ctx.kafka, [{ topic: TOPIC, partitions: settings.partitions }]);
    const rates = new Map<number, number[]>(settings.relayCounts.map((n) => [n, []]));
    let started = 0;
    for (let round = 0; round < settings.rounds; round++) {
      const counts = round % 2 === 0 ? settings.relayCounts : [...settings.relayCounts].reverse();
      for (const n of counts) {
        await clearOutbox(db);
        const relays: RoleHandle[] = await Promise.all(
          Array.from({ length: n }, () =>
            startRole(ctx.stack, {
              component: `b2-relay-${++started}`,
              service: 'order',
              role: 'relay',
              databaseUrl: url,
              env: { RELAY_BATCH_SIZE: String(settings.batchSize), RELAY_POLL_INTERVAL_MS: '100' },
            }),
          ),
        );
        // Let the relays settle (connections, first empty claim) before the backlog lands.
        await sleep(500);
        const insertStarted = performance.now();
        await writeBacklog(db, { events: settings.scaleEvents, keys: settings.keys, topic: TOPIC });
        const committed = performance.now();
        while (await unpublishedLeft(db)) await sleep(20);
        const seconds = (performance.now() - committed) / 1000;
        await Promise.all(relays.map((relay) => relay.stop()));
        const rate = settings.scaleEvents / seconds;
        rates.get(n)?.push(rate);
        ctx.log(
          `B2 round ${round + 1}, ${n} relay(s): ${int(rate)} events/s (backlog insert ${fixed((committed - insertStarted) / 1000, 1)} s)`,
        );
      }
    }
    const one = spread(rates.get(1) ?? []);
    return {
      id: 'B2',
      title: 'Relay scaling: 1, 2 and 4 relay processes on one backlog',
      tables: [
        {
          headers: ['relays', 'events/s median (min–max)', 'vs 1 relay', 'runs (events/s)'],
          rows: settings.relayCounts.map((n) => {
            const s = spread(rates.get(n) ?? []);
            return [
              String(n),
              showSpread(s),
              fixed(s.median / one.median),
              s.runs.map(int).join(', '),
            ];
          }),
        },
      ],
      notes: [
        `${int(settings.scaleEvents)} events per run, ${settings.keys} keys, ${settings.partitions} partitions, batch ${settings.batchSize}; each relay is an order-service process (\`--roles relay\`).`,
        'The machine has 2 cores shared by PostgreSQL, Kafka, the relays and the bench: more relays add claim contention and context switches, not CPU.',
      ],
      targets: [],
    };
  } finally {
    await db.destroy();
  }
}
